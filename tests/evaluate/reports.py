"""Saved reports built by hand from known per-query arrays (for ``compare`` tests)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ragsonde.evaluate.report import EvalReport

N = 50
IDS = [f"q{i:02d}" for i in range(N)]


def report_json(
    metrics: dict[str, np.ndarray], ids: list[str] = IDS, name: str = "A"
) -> dict[str, Any]:
    """A saved report as ``eval --save`` writes it (schema 1.0, before ``schema_version``
    existed): means and per-query metrics, the other parts empty."""
    per_query: dict[str, dict[str, Any]] = {}
    for i, qid in enumerate(ids):
        per_query[qid] = {
            "query": f"question number {qid}",
            "metrics": {m: float(v[i]) for m, v in metrics.items()},
            "relevant": {},
            "retrieved": [],
            "total_ms": 1.0,
            "timings": {},
        }
    return {
        "dataset": "hand-made",
        "collection": f"coll-{name}",
        "embedder": f"emb-{name}",
        "relevance_by": "doc",
        "ks": [10],
        "search": {},
        "metrics": {m: float(np.mean(v)) for m, v in metrics.items()},
        "latency": {},
        "integrity": {},
        "benchmark": {"name": "hand-made", "queries": len(ids)},
        "created_at": "2026-11-23T00:00:00+00:00",
        "per_query": per_query,
    }


def make_report(
    metrics: dict[str, np.ndarray], ids: list[str] = IDS, name: str = "A"
) -> EvalReport:
    return EvalReport.model_validate(report_json(metrics, ids, name))


def known_arrays() -> tuple[np.ndarray, np.ndarray]:
    """Per-query ndcg@10 of A and B (B slightly better, noisy), rounded like saved reports."""
    rng = np.random.default_rng(42)
    a = np.round(rng.uniform(0.2, 0.9, N), 6)
    b = np.round(np.clip(a + rng.normal(0.03, 0.1, N), 0, 1), 6)
    b[:5] = a[:5]  # five exact ties
    return a, b
