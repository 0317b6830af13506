"""Choosing among configurations: the Pareto front, k-fold cross-validation, the recommendation.

Selection maximises nDCG@10 among the configurations the constraints admit; near ties
(within ``TIE`` nDCG) go to the one with less vector memory, then lower p95 latency, so a cheaper
configuration wins when quality does not tell them apart.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragsonde.tune.report import (
    ConfigResult,
    Constraints,
    CrossValidation,
    FoldResult,
    Recommendation,
)

__all__ = ["TIE", "best", "cross_validate", "folds_of", "pareto_front", "recommend"]

TIE = 1e-4


def pareto_front(configs: Sequence[ConfigResult]) -> list[str]:
    """Ids of the configurations no other beats on nDCG@10, p95 latency and vector memory at
    once (better or equal on all three, strictly better on one)."""

    def key(c: ConfigResult) -> tuple[float, float, float]:
        return (-c.ndcg, c.latency_p95_ms, c.vector_memory_mb)

    points = [(key(c), c.id) for c in configs]
    front = []
    for k, cid in points:
        dominated = any(
            all(o <= s for o, s in zip(other, k, strict=True)) and other != k for other, _ in points
        )
        if not dominated:
            front.append(cid)
    return front


def _mean(c: ConfigResult, queries: Sequence[str]) -> float:
    return float(np.mean([c.per_query_ndcg.get(q, 0.0) for q in queries])) if queries else 0.0


def best(
    configs: Sequence[ConfigResult], queries: Sequence[str] | None = None
) -> ConfigResult | None:
    """The highest nDCG@10 (on ``queries``, default all), near ties to the cheaper one."""
    if not configs:
        return None
    scored = [(c.ndcg if queries is None else _mean(c, queries), c) for c in configs]
    top = max(s for s, _ in scored)
    near = [c for s, c in scored if s >= top - TIE]
    return min(near, key=lambda c: (c.vector_memory_mb, c.latency_p95_ms, c.id))


def folds_of(query_ids: Sequence[str], k: int, seed: int = 13) -> list[list[str]]:
    """``k`` disjoint folds covering ``query_ids`` (a seeded shuffle, so runs repeat)."""
    ordered = sorted(query_ids)
    ids = [ordered[i] for i in np.random.default_rng(seed).permutation(len(ordered))]
    return [ids[i::k] for i in range(k)]


def cross_validate(
    configs: Sequence[ConfigResult], query_ids: Sequence[str], k: int, scope: str
) -> CrossValidation | None:
    """Choose on k-1 folds, score the choice on the fold left out; ``None`` without configs."""
    if not configs:
        return None
    k = max(2, min(k, len(query_ids)))
    folds = folds_of(query_ids, k)
    per_fold: list[FoldResult] = []
    held: list[float] = []
    trained: list[float] = []
    for i, held_out in enumerate(folds):
        train = [q for j, f in enumerate(folds) if j != i for q in f]
        chosen = best(configs, train)
        if chosen is None:  # unreachable: configs is not empty
            continue
        train_score = _mean(chosen, train)
        held.extend(chosen.per_query_ndcg.get(q, 0.0) for q in held_out)
        trained.append(train_score)
        per_fold.append(
            FoldResult(
                fold=i,
                n_train=len(train),
                n_held_out=len(held_out),
                chosen=chosen.id,
                train_ndcg=train_score,
                held_out_ndcg=_mean(chosen, held_out),
            )
        )
    return CrossValidation(
        scope=scope,
        folds=k,
        held_out_ndcg=float(np.mean(held)),
        train_ndcg=float(np.mean(trained)),
        per_fold=per_fold,
    )


def recommend(
    configs: Sequence[ConfigResult], constraints: Constraints, cv: CrossValidation | None
) -> Recommendation:
    """The best configuration the constraints admit, chosen on every query."""
    feasible = [c for c in configs if constraints.admits(c)]
    chosen = best(feasible)
    if chosen is None:
        return Recommendation(
            config=None,
            constraints=constraints,
            feasible=0,
            reason="No configuration meets the constraints: relax --max-latency-ms, "
            "--min-recall or --max-memory-mb, or widen the grid.",
        )
    return Recommendation(
        config=chosen.id,
        constraints=constraints,
        feasible=len(feasible),
        reason=f"Highest nDCG@10 ({chosen.ndcg:.4f}) of {len(feasible)} admissible "
        "configurations; near ties go to less memory, then lower latency.",
        held_out_ndcg=cv.held_out_ndcg if cv else None,
    )
