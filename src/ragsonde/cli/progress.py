"""The CLI's one progress display: Rich bars on stderr, drawn only on a terminal without --json.

:class:`RichProgress` implements :class:`ragsonde.progress.Progress` for every command: a bar of
``unit`` per pass (``start`` opens the next pass: versus runs one per side), optional tallies
counted from ``advance``'s extra numbers (ingest's chunks, push's copied and skipped), and a
rate of one tally.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import TracebackType
from typing import Self

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ragsonde.cli._common import err_console

__all__ = ["RichProgress"]


class RichProgress:
    """Progress bars for ``eval``, ``eval --versus``, ``ingest`` and ``push``.

    ``passes`` names the passes (``("A", "B")``: one bar each); ``tallies`` names the extra
    numbers ``advance`` gets after ``n`` (ingest: chunks). With ``tallies_advance`` they name
    all of its numbers, ``n`` included, and the bar moves by their sum (push: copied + skipped
    points). ``rate`` is the tally shown per second.
    """

    def __init__(
        self,
        enabled: bool,
        unit: str,
        *,
        passes: Sequence[str] = (),
        tallies: Sequence[str] = (),
        tallies_advance: bool = False,
        rate: str | None = None,
    ) -> None:
        self.unit = unit
        self.passes = tuple(passes)
        self.tallies = tuple(tallies)
        self.tallies_advance = tallies_advance
        self.rate = rate
        self.counts = dict.fromkeys(self.tallies, 0)
        columns: list[str | ProgressColumn] = [
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
        ]
        if self.tallies:
            columns.append(TextColumn("{task.fields[tallies]}"))
        if self.tallies or self.rate:
            columns += [TimeElapsedColumn(), TextColumn("ETA")]
        columns.append(TimeRemainingColumn())
        self._p = Progress(*columns, console=err_console, disable=not enabled)
        self._tasks: list[TaskID] = []

    def __enter__(self) -> Self:
        self._p.__enter__()
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._p.__exit__(t, e, tb)

    def _describe(self) -> str:
        parts = [f"{self.counts[t]} {t}" for t in self.tallies]
        if self.rate is not None and self._tasks:
            elapsed = self._p.tasks[len(self._tasks) - 1].elapsed or 0.0
            per_s = f"{self.counts[self.rate] / elapsed:.1f}" if elapsed > 0 else "–"
            parts.append(f"{per_s} {self.rate}/s")
        return " · ".join(parts)

    def start(self, total: int | None, /) -> None:
        n = len(self._tasks)
        side = f" {self.passes[min(n, len(self.passes) - 1)]}" if self.passes else ""
        self._tasks.append(
            self._p.add_task(f"{self.unit}{side}", total=total, tallies=self._describe())
        )

    def advance(self, n: int, /, *counts: int) -> None:
        if not self._tasks:
            return
        values = (n, *counts) if self.tallies_advance else counts
        for name, c in zip(self.tallies, values, strict=False):
            self.counts[name] += c
        step = sum(values) if self.tallies_advance else n
        self._p.update(self._tasks[-1], advance=step, tallies=self._describe())
