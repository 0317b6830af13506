"""A damaged history file: what is checked before SQLite opens one, and the error it raises.

A path that is a directory, lies under a file or loops, a file that is not an SQLite database
(its header), another program's database (its ``application_id``), or a file shorter than its
header says (truncated: not a whole number of pages, or fewer pages than counted, with no
write-ahead log pending) is refused before SQLite touches it; :class:`HistoryFileError` names
the path and what to do, and nothing in the history ever rewrites or deletes such a file.
"""

from __future__ import annotations

import re
import sqlite3
import stat
from pathlib import Path

from ragsonde.errors import QueryValidationError
from ragsonde.models.text import printable
from ragsonde.sqlite_cache import SQLITE_HEADER

__all__ = ["APPLICATION_ID", "HistoryFileError", "check_file", "refuse_foreign"]

#: ``PRAGMA application_id`` of a ragsonde history ("RSND"): set when the file is created, so
#: that another program's database at the history path is told apart before it is touched.
APPLICATION_ID = 0x52534E44


class HistoryFileError(QueryValidationError):
    """The history file is damaged, truncated, or from a newer ragsonde (VALIDATION_ERROR:
    a bad input file). ``path`` is the file; it is never rewritten: the message says how to
    move it aside."""

    def __init__(self, path: Path, what: str, *, damaged: bool = True) -> None:
        advice = (
            f"Move it aside to start a new history (mv '{path}' '{path}.damaged'), or salvage "
            f"its runs with `sqlite3 '{path}' .recover`"
            if damaged
            else "Name another file for the history with --history (or RAGSONDE_HISTORY)"
        )
        super().__init__(
            f"History file {path} is {what}. It was left untouched. {advice}; evaluate without "
            "recording meanwhile with --no-record (RAGSONDE_RECORD=0).",
            field="history",
        )
        self.path = path


def check_file(path: Path) -> None:
    """Refuse, before SQLite touches it, a path that cannot hold the history (a directory,
    under a file, a symlink loop, a folder that cannot be made), a file that is not a database
    or is cut short, and another program's database (its ``application_id``); and one inside a
    Qdrant store's folder, which deleting a collection would delete with it."""
    from ragsonde.outputs import store_holding

    store = store_holding(path)
    if store is not None:
        raise HistoryFileError(
            path, f"inside a Qdrant store ({store}), which is no place for it", damaged=False
        )
    try:
        st = path.stat()
    except FileNotFoundError:
        _check_folder(path)
        return
    except ValueError as e:  # a NUL ("embedded null byte"), a lone surrogate (UnicodeEncodeError)
        raise HistoryFileError(
            Path(printable(str(path))),
            "not a usable path (not text a file name can hold)",
            damaged=False,
        ) from e
    except OSError as e:  # ELOOP, ENOTDIR (under a file), EACCES
        raise HistoryFileError(path, f"not a usable path ({e.strerror or e})", damaged=False) from e
    if stat.S_ISDIR(st.st_mode):
        raise HistoryFileError(
            path, "a directory, not a file; name a file (e.g. in it)", damaged=False
        )
    if not stat.S_ISREG(st.st_mode):  # a FIFO or /dev/zero: size 0, read as an empty history
        raise HistoryFileError(
            path, "a named pipe or a device, not a file; name a file", damaged=False
        )
    size = st.st_size
    if size == 0:
        return  # SQLite's own empty database
    with path.open("rb") as fh:
        head = fh.read(100)
    if len(head) < 100 or not head.startswith(SQLITE_HEADER):
        raise HistoryFileError(path, "not an SQLite database (its header is not SQLite's)")
    app_id = int.from_bytes(head[68:72], "big")
    if app_id not in (0, APPLICATION_ID):
        raise HistoryFileError(
            path, f"another program's SQLite database (application_id {app_id:#x})", damaged=False
        )
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    if page_size < 512 or page_size & (page_size - 1):  # SQLite's: a power of two, 512..65536
        raise HistoryFileError(path, f"not an SQLite database (page size {page_size})")
    pages = int.from_bytes(head[28:32], "big")
    valid = head[24:28] == head[92:96]  # the in-header page count is current
    wal = path.with_name(path.name + "-wal")
    pending = wal.is_file() and wal.stat().st_size > 0  # a WAL may hold pages not yet copied
    if not pending and (size % page_size or (valid and size < page_size * pages)):
        raise HistoryFileError(
            path,
            f"truncated ({size} bytes; its header says {pages} pages of {page_size} bytes)",
        )


def _check_folder(path: Path) -> None:
    """The folder of a history file that does not exist yet: a folder, or creatable."""
    for folder in (path.parent, *path.parent.parents):
        if folder.exists():
            if not folder.is_dir():
                raise HistoryFileError(
                    path, f"under a file ({folder} is not a folder)", damaged=False
                )
            return


def _our_tables() -> frozenset[str]:
    """Every table a ragsonde history holds, at any version."""
    from ragsonde.history.schema import MIGRATIONS

    return frozenset({"schema_version", *re.findall(r"CREATE TABLE (\w+)", "".join(MIGRATIONS))})


def refuse_foreign(db: sqlite3.Connection, path: Path) -> None:
    """Refuse another program's database before anything is written to it (not even the
    journal mode): a file stamped with another application id, or holding a table ragsonde
    never made. A ragsonde file is stamped, or (from before the stamp) holds only ragsonde's
    tables; a ``schema_version`` table alone let another program's database be migrated."""
    app = db.execute("PRAGMA application_id").fetchone()[0]
    if app == APPLICATION_ID:
        return
    tables = {
        r[0]
        for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if not r[0].startswith("sqlite_")
    }
    foreign = sorted(tables - _our_tables())
    if app != 0 or foreign:
        shown = ", ".join(foreign[:5]) or "none of ragsonde's"
        raise HistoryFileError(
            path,
            f"another program's SQLite database (application id {app:#x}, tables: {shown})",
            damaged=False,
        )
