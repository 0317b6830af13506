"""Helpers of the history tests (the fixtures are in this folder's conftest)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ragsonde.embedders.onnx import OnnxEmbedder


@dataclass(frozen=True)
class Story:
    home: Path
    history: Path
    bench: Path
    changed_labels: Path
    runs: dict[str, int]
    embedder: OnnxEmbedder


def changed_labels(bench: Path, out: Path) -> Path:
    """``bench`` with the first query's relevant document swapped for another one."""
    lines = bench.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["relevant"] = ["imu"] if first["relevant"] != ["imu"] else ["lidar"]
    out.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    return out
