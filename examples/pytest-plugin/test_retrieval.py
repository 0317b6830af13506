"""Retrieval is part of the product: this suite fails when search gets worse."""

from __future__ import annotations

from pathlib import Path
from typing import Any

BENCHMARK = Path(__file__).parent / "benchmark.jsonl"

#: The right page is among the first five results for at least 80 % of the questions, and
#: every returned chunk is intact (text matches its hash, url and title present, scores sane).
GATES = ["hit_rate@5>=0.8", "integrity.problems==0"]


def test_the_right_page_comes_back(assert_retrieval: Any, retrieval_config: dict[str, Any]) -> None:
    report = assert_retrieval(BENCHMARK, GATES, ks=(1, 5, 10), **retrieval_config)
    assert report.n_queries == 8
