"""The ``ragsonde`` command line: thin commands over the library.

Each module registers its commands on :data:`ragsonde.cli.app.app`; importing them here is what
makes them part of the CLI. Heavy libraries are imported inside the commands, so ``--help`` is
instant.
"""

from __future__ import annotations

import importlib

from ragsonde.cli.app import app

__all__ = ["app", "main"]

#: Command modules, in the order their commands are listed in ``--help``.
_COMMAND_MODULES = ("query", "ingest", "push", "eval", "compare", "serve", "generate", "judge")


def _register() -> None:
    for name in _COMMAND_MODULES:
        importlib.import_module(f"ragsonde.cli.{name}")


def main() -> None:
    """Entry point of the ``ragsonde`` script."""
    _register()
    app()
