"""A benchmark's files read as text: their lines, their CSV rows, and the refusal that names the
file (:func:`bad`), or the name the benchmark is shown by instead (``load_benchmark``'s
``shown_as``: a server's copy of uploaded rows sits at a path its client never named)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ragsonde.errors import QueryValidationError

__all__ = ["Lines", "Unreadable", "bad", "csv_rows", "in_command"]


class Unreadable(QueryValidationError):
    """``Cannot read benchmark PATH: WHY``, the file (``path``) and the reason (``why``) kept
    apart, so ``load_benchmark`` names a benchmark shown by another name (``shown_as``) from
    them, never by editing the message's text."""

    path: Path
    why: str


def bad(path: Path, why: str, shown_as: str | None = None) -> QueryValidationError:
    """The refusal of the benchmark file ``path``, naming it by ``shown_as`` when given (``the
    uploaded benchmark``: a server's temporary copy of rows it was sent has a path the client
    never named), else by its path."""
    e = Unreadable(f"Cannot read {shown_as or f'benchmark {path}'}: {why}", field="dataset")
    e.path, e.why = path, why
    return e


def in_command(path: str | Path, shown_as: str | None) -> str:
    """The benchmark in a command a message suggests: its path, or for one shown by another
    name (a file the user never named), ``BENCHMARK`` with its suffix."""
    return str(path) if shown_as is None else f"BENCHMARK{Path(path).suffix}"


class Lines:
    """A text file's lines, numbered; decoding and reading errors name the file and the line.

    It has ``read`` so ir-measures' readers iterate it as an open file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.n = 0

    def read(self) -> str:  # pragma: no cover - ir-measures only checks that it exists
        return "".join(self)

    def __iter__(self) -> Iterator[str]:
        from ragsonde.inputs import text_lines

        lines = text_lines(self.path)  # a FIFO or a device refused; each line bounded, decoded
        try:
            for self.n, text in lines:
                yield text
        except ValueError as e:  # a FIFO, a device, a line over the limit, not UTF-8
            raise bad(self.path, str(e)) from e


def csv_rows(lines: Lines, **fmt: Any) -> Iterator[list[str]]:
    """``csv.reader`` over ``lines``; a row it cannot read (a field over its 131,072-character
    limit, a stray quote) is an error naming the file and line."""
    rows = csv.reader(lines, **fmt)
    while True:
        try:
            row = next(rows)
        except StopIteration:
            return
        except csv.Error as e:
            raise bad(lines.path, f"line {lines.n} is not a CSV row ({e})") from e
        yield row
