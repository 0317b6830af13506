"""Partly labelled and partly generated copies of the sample benchmark (what the estimate's
tests and the plugin's evaluate)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragsonde.samples import robotics_benchmark

#: Rows of the sample benchmark (46) that keep a person's labels in the copies below.
HUMAN = 20


def _rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in robotics_benchmark().read_text().splitlines() if line]


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def partly_labelled(path: Path, human: int = HUMAN) -> Path:
    """The sample benchmark with ``relevant`` kept on its first ``human`` rows only."""
    rows = _rows()
    for row in rows[human:]:
        del row["relevant"]
    return write_rows(path, rows)


def generated_after(path: Path, human: int = HUMAN) -> Path:
    """The sample benchmark with every row after the first ``human`` marked as generated (its
    label the generator's, as ``ragsonde generate`` writes a row)."""
    rows = _rows()
    for row in rows[human:]:
        row["generator"] = "offline:gist"
    return write_rows(path, rows)
