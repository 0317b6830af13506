"""A damaged history file: what is checked before SQLite opens one, and the error it raises.

A file that is not an SQLite database (its header), or is shorter than its header says
(truncated: not a whole number of pages, or fewer pages than counted, with no write-ahead log
pending), is refused before SQLite touches it; :class:`HistoryFileError` names the path and
what to do, and nothing in the history ever rewrites or deletes such a file.
"""

from __future__ import annotations

from pathlib import Path

from ragsonde.errors import QueryValidationError

__all__ = ["HistoryFileError", "check_file"]

_HEADER = b"SQLite format 3\x00"


class HistoryFileError(QueryValidationError):
    """The history file is damaged, truncated, or from a newer ragsonde (VALIDATION_ERROR:
    a bad input file). ``path`` is the file; it is never rewritten: the message says how to
    move it aside."""

    def __init__(self, path: Path, what: str) -> None:
        super().__init__(
            f"History file {path} is {what}. It was left untouched. Move it aside to start a new "
            f"history (mv '{path}' '{path}.damaged'), or salvage its runs with `sqlite3 '{path}' "
            ".recover`; evaluate without recording meanwhile with --no-record (RAGSONDE_RECORD=0).",
            field="history",
        )
        self.path = path


def check_file(path: Path) -> None:
    """Refuse, before SQLite touches it, a file that is not a database or is cut short."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return
    if size == 0:
        return  # SQLite's own empty database
    with path.open("rb") as fh:
        head = fh.read(100)
    if len(head) < 100 or not head.startswith(_HEADER):
        raise HistoryFileError(path, "not an SQLite database (its header is not SQLite's)")
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    valid = head[24:28] == head[92:96]  # the in-header page count is current
    wal = path.with_name(path.name + "-wal")
    pending = wal.is_file() and wal.stat().st_size > 0  # a WAL may hold pages not yet copied
    if not pending and (size % page_size or (valid and size < page_size * pages)):
        raise HistoryFileError(
            path,
            f"truncated ({size} bytes; its header says {pages} pages of {page_size} bytes)",
        )
