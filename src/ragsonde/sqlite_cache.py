"""The one reading of a SQLite cache's errors (the chunking embedding cache, the LLM answer
cache): busy or locked is another process writing it (run again), anything else a damaged
file (delete it: it is only a cache). Never read as empty."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ragsonde.errors import QueryValidationError

__all__ = ["cache_errors"]


@contextmanager
def cache_errors(
    what: str,
    path: Path,
    anew: str,
    damaged: tuple[type[BaseException], ...] = (sqlite3.Error, ValueError),
) -> Iterator[None]:
    """SQLite errors of the cache ``what`` at ``path`` as one VALIDATION_ERROR naming the file;
    ``anew``: what deleting it costs; ``damaged``: the errors that mean a damaged file."""
    try:
        yield
    except sqlite3.OperationalError as e:  # busy or locked (another process), or read-only
        raise QueryValidationError(
            f"The {what} {path} cannot be used now ({e}). Another ragsonde process may be "
            "writing it: run again when it is done.",
            field="home",
        ) from e
    except damaged as e:
        raise QueryValidationError(
            f"The {what} {path} cannot be used ({e}). It is only a cache: delete it "
            f"(rm '{path}') and run again; {anew}.",
            field="home",
        ) from e
