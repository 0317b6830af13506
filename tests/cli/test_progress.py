"""The CLI's one progress display, drawn for each command's kind of work."""

from __future__ import annotations

import io

from rich.console import Console

from ragsonde.cli import progress as progress_module
from ragsonde.cli.progress import RichProgress


def _drawn(monkeypatch, bar_args: dict, calls: list[tuple]) -> tuple[RichProgress, str]:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120, color_system=None)
    monkeypatch.setattr(progress_module, "err_console", console)
    with RichProgress(True, **bar_args) as bar:
        for name, *args in calls:
            getattr(bar, name)(*args)
    return bar, out.getvalue()


def test_eval_versus_sides_get_a_bar_each(monkeypatch):
    _, text = _drawn(
        monkeypatch,
        {"unit": "queries", "passes": ("A", "B")},
        [("start", 3), ("advance", 1), ("advance", 2), ("start", 3), ("advance", 3)],
    )
    assert "queries A" in text and "queries B" in text and "3/3" in text


def test_ingest_counts_chunks_and_push_moves_by_copied_plus_skipped(monkeypatch):
    bar, text = _drawn(
        monkeypatch,
        {"unit": "documents", "tallies": ("chunks",), "rate": "chunks"},
        [("start", 2), ("advance", 1, 5), ("advance", 1, 7)],
    )
    assert bar.counts == {"chunks": 12} and "2/2" in text and "12 chunks" in text
    bar, text = _drawn(
        monkeypatch,
        {"unit": "points", "tallies": ("copied", "skipped"), "tallies_advance": True},
        [("start", 10), ("advance", 4, 6)],
    )
    assert bar.counts == {"copied": 4, "skipped": 6} and "10/10" in text
