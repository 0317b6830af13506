"""Which settings file is read: the one place that knows, and light enough (the standard library
only) for a command that reads no settings, such as ``history trend --out``, to ask which file
its outputs must not replace."""

from __future__ import annotations

import os
from contextvars import ContextVar
from pathlib import Path

__all__ = ["CONFIG_FILE", "config_file_path"]

#: The settings file a ``load_settings(config=...)`` call reads (``--config FILE``), while it runs.
CONFIG_FILE: ContextVar[Path | None] = ContextVar("ragsonde_config_file", default=None)


def config_file_path() -> Path:
    """The settings file read when none is named: RAGSONDE_CONFIG, else ./ragsonde.toml (or
    the ``--config`` file while :func:`ragsonde.config.load_settings` reads it)."""
    return CONFIG_FILE.get() or Path(os.environ.get("RAGSONDE_CONFIG", "ragsonde.toml"))
