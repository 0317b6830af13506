"""The Typer application every command module registers on, with ``--version`` and ``-h``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer

from ragsonde.cli.panels import WorkflowGroup

#: When this command started: the :func:`time.perf_counter` reading taken as the CLI was loaded.
#: A command's report counts its time from here (``eval``'s ``seconds`` covers loading its
#: libraries and its benchmark, not only the queries).
STARTED = time.perf_counter()

app = typer.Typer(
    name="ragsonde",
    cls=WorkflowGroup,
    help="Does my retrieval actually work, and how fast? Retrieve, ingest and evaluate on Qdrant.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    if value:
        from ragsonde import __version__

        typer.echo(f"ragsonde {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            callback=_print_version,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="Settings file (TOML) for the command, as the command's own --config.",
        ),
    ] = None,
) -> None:
    """Does my retrieval actually work, and how fast? Retrieve, ingest and evaluate on Qdrant."""
    from ragsonde.cli._common import set_root_config

    set_root_config(config)
