"""Measures of one configuration: quality against the labels, recall against a reference search,
latency percentiles. Metrics are computed by :func:`ragsonde.evaluate.metrics.compute_metrics`
(ir-measures), never re-implemented here."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ragsonde.evaluate.aggregation import Aggregation
from ragsonde.evaluate.aggregation import aggregate as aggregate_docs
from ragsonde.evaluate.metrics import compute_metrics

__all__ = ["QUALITY_METRICS", "aggregate", "latency", "overlap_recall", "score_run"]

#: What every configuration is scored on; ``ndcg@10`` is what selection maximises.
QUALITY_METRICS = ("ndcg@10", "recall@10", "recall@100")

Hits = Sequence[tuple[str, float]]


def aggregate(hits: Hits, doc_of: Callable[[str], str], how: Aggregation) -> dict[str, float]:
    """Ranked chunks -> document scores, by :func:`ragsonde.evaluate.aggregation.aggregate`
    (what ``eval`` does with the same setting). Hits arrive best first."""
    return aggregate_docs(((doc_of(point_id), score) for point_id, score in hits), how)


def score_run(
    qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]]
) -> tuple[dict[str, float], dict[str, float]]:
    """Mean quality metrics, and per-query nDCG@10 (what cross-validation splits)."""
    means, per_query = compute_metrics(QUALITY_METRICS, qrels, run)
    return means, {q: m["ndcg@10"] for q, m in per_query.items()}


def overlap_recall(got: Sequence[Hits], reference: Sequence[Hits], k: int) -> float:
    """Mean share of the reference's top ``k`` point ids found in the top ``k`` of ``got``
    (the usual ANN recall@k, with the reference standing in for the true neighbours)."""
    shares = []
    for a, b in zip(got, reference, strict=True):
        want = {pid for pid, _ in b[:k]}
        if want:
            shares.append(len(want & {pid for pid, _ in a[:k]}) / len(want))
    return float(np.mean(shares)) if shares else 1.0


def latency(ms: Sequence[float]) -> tuple[float, float]:
    """p50 and p95 in milliseconds (NumPy's linear interpolation)."""
    if not ms:
        return 0.0, 0.0
    p50, p95 = np.percentile(np.asarray(ms, dtype=float), [50, 95])
    return float(p50), float(p95)
