"""What the library's tests share: settings on a home of the test's own (default collection
``docs``, which no test builds) and a one-question benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsonde.config import Settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", collection="docs")


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps({"query_id": "q1", "query": "lidar", "relevant": ["lidar"]}) + "\n")
    return path
