"""Sample data shipped with ragsonde: a small docs site about a mobile robot, with a benchmark.

``robotics/docs`` holds 24 Markdown pages (front matter ``title``, ``url``, ``category``);
``robotics/benchmark.jsonl`` 46 questions with the pages that answer them (six of them carry a
``category`` filter); and
``robotics/demo_queries.json`` the questions ``make demo`` asks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["SAMPLES", "demo_queries", "robotics_benchmark", "robotics_docs"]

SAMPLES = Path(__file__).resolve().parent


def robotics_docs() -> Path:
    """The folder of sample Markdown pages."""
    return SAMPLES / "robotics" / "docs"


def robotics_benchmark() -> Path:
    """The sample benchmark (ragsonde JSON Lines: ``query_id``, ``query``, ``relevant``,
    ``filters``)."""
    return SAMPLES / "robotics" / "benchmark.jsonl"


def demo_queries() -> list[dict[str, Any]]:
    """``[{"query": …, "expect": <doc_id>}, …]``."""
    data: list[dict[str, Any]] = json.loads(
        (SAMPLES / "robotics" / "demo_queries.json").read_text(encoding="utf-8")
    )
    return data
