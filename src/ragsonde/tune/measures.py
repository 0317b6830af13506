"""Measures of one configuration: quality against the labels, recall against a reference search,
latency percentiles. Metrics are computed by :func:`ragsonde.evaluate.metrics.compute_metrics`
(ir-measures), never re-implemented here."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from ragsonde.evaluate.metrics import compute_metrics
from ragsonde.tune.grid import Aggregation

__all__ = ["QUALITY_METRICS", "aggregate", "latency", "overlap_recall", "score_run"]

#: What every configuration is scored on; ``ndcg@10`` is what selection maximises.
QUALITY_METRICS = ("ndcg@10", "recall@10", "recall@100")

Hits = Sequence[tuple[str, float]]


def aggregate(hits: Hits, doc_of: Callable[[str], str], how: Aggregation) -> dict[str, float]:
    """Ranked chunks -> document scores: the best chunk (``max``) or the sum of a document's
    ``n`` best chunk scores (``sum``). Hits arrive best first."""
    docs: dict[str, list[float]] = {}
    for point_id, score in hits:
        scores = docs.setdefault(doc_of(point_id), [])
        if len(scores) < how.n:
            scores.append(score)
    if how.method == "max":
        return {d: s[0] for d, s in docs.items()}
    return {d: float(sum(s)) for d, s in docs.items()}


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
