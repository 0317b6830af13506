"""Helpers of the history tests (the fixtures are in this folder's conftest)."""

from __future__ import annotations

import json
import shutil
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


def degraded_copy(home: Path, dest: Path) -> Path:
    """A copy of ``home`` whose ``robotics`` collection lost two thirds of its documents."""
    from ragsonde.store.edge import EdgeStore

    shutil.copytree(home, dest, ignore=shutil.ignore_patterns("history.sqlite*"))
    store = EdgeStore(dest)
    try:
        points = [p for batch in store.scroll("robotics") for p in batch]
        kept = set(sorted({p.payload["doc_id"] for p in points})[::3])
        store.delete_points("robotics", [p.id for p in points if p.payload["doc_id"] not in kept])
    finally:
        store.close()
    return dest
