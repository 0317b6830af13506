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
    SplitSpread,
)

__all__ = [
    "SEED",
    "SPREAD_SPLITS",
    "TIE",
    "best",
    "cross_validate",
    "folds_of",
    "held_out_scores",
    "pareto_front",
    "recommend",
]

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


def _cheapness(c: ConfigResult) -> tuple[float, float, str]:
    """How near ties are broken: less vector memory, then lower p95, then the id."""
    return (c.vector_memory_mb, c.latency_p95_ms, c.id)


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
    return min(near, key=_cheapness)


#: The fold split of the headline held-out figure; the spread's splits use the seeds after it.
SEED = 13
#: How many other fold splits the spread repeats the selection over.
SPREAD_SPLITS = 10


def folds_of(query_ids: Sequence[str], k: int, seed: int = SEED) -> list[list[str]]:
    """``k`` disjoint folds covering ``query_ids`` (a seeded shuffle, so runs repeat)."""
    ordered = sorted(query_ids)
    ids = [ordered[i] for i in np.random.default_rng(seed).permutation(len(ordered))]
    return [ids[i::k] for i in range(k)]


class _Selection:
    """The configurations as a matrix (configuration x query nDCG@10, 0 where missing), so one
    k-fold selection is a few array operations and the spread can repeat it cheaply."""

    def __init__(self, configs: Sequence[ConfigResult], query_ids: Sequence[str]) -> None:
        self.configs = list(configs)
        self.column = {q: i for i, q in enumerate(query_ids)}
        self.scores = np.array(
            [[c.per_query_ndcg.get(q, 0.0) for q in query_ids] for c in self.configs]
        )
        # near ties are broken as ``best`` breaks them
        order = sorted(range(len(self.configs)), key=lambda i: _cheapness(self.configs[i]))
        self.cheapness = np.empty(len(order), dtype=int)
        self.cheapness[order] = np.arange(len(order))

    def choose(self, train: Sequence[str]) -> int:
        means = self.scores[:, [self.column[q] for q in train]].mean(axis=1)
        near = np.flatnonzero(means >= means.max() - TIE)
        return int(near[np.argmin(self.cheapness[near])])

    def run(self, folds: Sequence[Sequence[str]]) -> tuple[list[FoldResult], np.ndarray]:
        """Per-fold results and the held-out score of every query."""
        per_fold: list[FoldResult] = []
        held: list[float] = []
        for i, held_out in enumerate(folds):
            train = [q for j, f in enumerate(folds) if j != i for q in f]
            chosen = self.choose(train)
            row = self.scores[chosen]
            scores = row[[self.column[q] for q in held_out]]
            held.extend(scores.tolist())
            per_fold.append(
                FoldResult(
                    fold=i,
                    n_train=len(train),
                    n_held_out=len(held_out),
                    chosen=self.configs[chosen].id,
                    train_ndcg=float(row[[self.column[q] for q in train]].mean()),
                    held_out_ndcg=float(scores.mean()) if len(scores) else 0.0,
                )
            )
        return per_fold, np.asarray(held)


def held_out_scores(
    configs: Sequence[ConfigResult], query_ids: Sequence[str], k: int
) -> tuple[dict[str, float], list[str]]:
    """Each query's score under the configuration chosen on the *other* folds (the headline
    split, :data:`SEED`), and the configuration chosen for each fold: what adopting tune's
    choice would have scored on queries it never saw."""
    k = max(2, min(k, len(query_ids)))
    selection = _Selection(configs, query_ids)
    folds = folds_of(query_ids, k)
    per_fold, held = selection.run(folds)
    order = [q for fold in folds for q in fold]
    return dict(zip(order, held.tolist(), strict=True)), [f.chosen for f in per_fold]


def cross_validate(
    configs: Sequence[ConfigResult],
    query_ids: Sequence[str],
    k: int,
    scope: str,
    spread_splits: int = SPREAD_SPLITS,
) -> CrossValidation | None:
    """Choose on k-1 folds, score the choice on the fold left out; ``None`` without configs.

    Also the held-out figure's standard error over the queries, and (``spread_splits`` > 0) its
    spread over as many other seeded fold splits: one split's figure is one draw."""
    if not configs:
        return None
    k = max(2, min(k, len(query_ids)))
    selection = _Selection(configs, query_ids)
    per_fold, held = selection.run(folds_of(query_ids, k))
    others = [
        float(selection.run(folds_of(query_ids, k, SEED + 1 + s))[1].mean())
        for s in range(spread_splits)
    ]
    return CrossValidation(
        scope=scope,
        folds=k,
        held_out_ndcg=float(held.mean()),
        train_ndcg=float(np.mean([f.train_ndcg for f in per_fold])),
        per_fold=per_fold,
        held_out_se=float(held.std(ddof=1) / np.sqrt(len(held))) if len(held) > 1 else None,
        spread=SplitSpread(
            splits=len(others), mean=float(np.mean(others)), min=min(others), max=max(others)
        )
        if others
        else None,
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
