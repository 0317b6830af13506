"""The one reading of a SQLite cache's errors (the chunking embedding cache, the LLM answer
cache): busy or locked is another process writing it (run again), anything else a damaged
file (delete it: it is only a cache). Never read as empty.

And the one way ragsonde's SQLite files wait for another process's write (:func:`patiently`):
SQLite's busy handler sleeps in C, so one long wait held Ctrl-C back for all of it (30 s after
Ctrl-C, ``history prune`` against a history another process was writing stopped)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ragsonde.errors import QueryValidationError

__all__ = ["SQLITE_HEADER", "STEP_S", "WAIT_S", "cache_errors", "is_busy", "patiently"]

#: The first 16 bytes of every SQLite database file.
SQLITE_HEADER = b"SQLite format 3\x00"
#: How long one try waits inside SQLite (the connection's ``timeout``): Ctrl-C is seen between.
STEP_S = 0.2
#: How long a writer waits in all for another process's transaction.
WAIT_S = 30.0
_BUSY, _LOCKED = 5, 6  # SQLite's primary result codes


def is_busy(e: BaseException) -> bool:
    """Whether ``e`` is SQLite's busy or locked (another process holds the file), by its result
    code, never its message."""
    code = getattr(e, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in (_BUSY, _LOCKED)


def patiently(step: Callable[[], object], wait_s: float = WAIT_S) -> None:
    """``step``, again while another process holds the file, for up to ``wait_s`` in tries of
    :data:`STEP_S` (on a connection opened with ``timeout=STEP_S``); then its busy error."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as e:
            if not is_busy(e) or time.monotonic() >= deadline:
                raise
        time.sleep(0.01)


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
