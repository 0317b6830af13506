"""The same vectors under Cosine, Dot and Euclid evaluate the same: metrics read the engine's
rank order, never a raw score that for Euclid is a distance (lower is better)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.evaluate import EvalOptions
from ragsonde.models.points import PointRecord
from ragsonde.models.scores import Distance
from ragsonde.store.edge import EdgeStore
from tests.support import evaluate_in

pytestmark = pytest.mark.slow
N_DOCS = 30


def test_cosine_dot_and_euclid_give_the_same_ndcg(tmp_path: Path, embedder, scifact_dir):
    with (scifact_dir / "corpus.jsonl").open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in itertools.islice(f, N_DOCS)]
    vectors = embedder.embed_documents([r["text"] for r in rows])
    points = [
        PointRecord(str(i + 1), v.tolist(), {"text": r["text"], "doc_id": r["_id"]})
        for i, (r, v) in enumerate(zip(rows, vectors, strict=True))
    ]
    store = EdgeStore(tmp_path)
    try:
        for d in (Distance.COSINE, Distance.DOT, Distance.EUCLID):
            store.create_collection(d.value.lower(), embedder.dimension, distance=d)
            store.upsert(d.value.lower(), points)
    finally:
        store.close()
    bench = tmp_path / "titles.jsonl"  # known-item: each title should find its abstract
    bench.write_text(
        "".join(
            json.dumps({"query_id": r["_id"], "query": r["title"], "relevant": [r["_id"]]}) + "\n"
            for r in rows
        ),
        encoding="utf-8",
    )
    ndcg: dict[str, float] = {}
    per_query: dict[str, dict[str, float]] = {}
    for name in ("cosine", "dot", "euclid"):
        report = evaluate_in(
            bench,
            settings=Settings(home=tmp_path, collection=name),
            embedder=embedder,
            options=EvalOptions(k=[10], throughput=False),
        )
        ndcg[name] = report.metrics["ndcg@10"]
        per_query[name] = {q: row.metrics["ndcg@10"] for q, row in report.per_query.items()}
    assert ndcg["cosine"] > 0.8  # titles find their abstracts: the benchmark can tell
    assert ndcg["dot"] == pytest.approx(ndcg["cosine"], abs=1e-9)
    assert ndcg["euclid"] == pytest.approx(ndcg["cosine"], abs=1e-9)
    assert per_query["euclid"] == pytest.approx(per_query["cosine"], abs=1e-9)
