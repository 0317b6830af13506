"""A query's ranking ends at the evaluation's fetch cap (5,000 chunks) before the deepest cutoff:
the report says how many queries, where metrics @k scored the rest as misses in silence. With
``--relevance-by chunk`` and a cutoff above the cap, every query was an error ("top_k must be
between 1 and 5000") instead.

Oracle: the same documents over 5,100 chunks (past the cap) and over 4,900 (the whole collection
fetched, so a short ranking is the collection's, not the cap's)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ragsonde.config import Settings
from ragsonde.evaluate import EvalOptions
from ragsonde.models.points import PointRecord
from ragsonde.store.edge import EdgeStore
from tests.support import evaluate_in

pytestmark = pytest.mark.slow  # 10,000 points written, ~20 queries embedded

DIM = 384  # the default model's


def _collection(home: Path, name: str, n: int) -> None:
    """``n`` random chunks of 51 documents (``d0`` … ``d50``), numbered point ids."""
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(n, DIM)).astype(np.float32)
    store = EdgeStore(home)
    try:
        store.create_collection(name, DIM)
        for start in range(0, n, 1000):
            store.upsert(
                name,
                [
                    PointRecord(str(i + 1), vectors[i].tolist(), {"text": f"chunk {i}",
                                                                 "doc_id": f"d{i % 51}"})
                    for i in range(start, min(n, start + 1000))
                ],
            )  # fmt: skip
    finally:
        store.close()


@pytest.mark.parametrize(
    ("by", "k", "relevant"), [("doc", 100, "d0"), ("chunk", 6000, "1")], ids=["doc", "chunk"]
)
def test_a_ranking_cut_by_the_fetch_cap_is_a_warning(
    tmp_path: Path, embedder: object, by: str, k: int, relevant: str
) -> None:
    bench = tmp_path / "bench.jsonl"
    bench.write_text(
        "".join(
            json.dumps({"query_id": f"q{i}", "query": text, "relevant": [relevant]}) + "\n"
            for i, text in enumerate(["lidar range", "battery life", "wheel odometry"])
        ),
        encoding="utf-8",
    )
    home = tmp_path / "home"
    said = {}
    for name, n in (("past", 5100), ("within", 4900)):
        _collection(home, name, n)
        report = evaluate_in(
            bench,
            EvalOptions(k=[10, k], throughput=False, relevance_by=by),
            settings=Settings(home=home, collection=name),
            record=False,
            embedder=embedder,
        )
        assert report.benchmark.errors == {}, report.benchmark.errors
        said[name] = [w for w in report.warnings if "ranked fewer than" in w]
    assert said["past"] == [
        f"3 of 3 queries ranked fewer than {k} {by}s: a query fetches at most 5000 chunks, so "
        f"metrics @{k} count the rest as misses. Use smaller cutoffs (--k)."
    ]
    assert said["within"] == []
