"""Tune's choice of a configuration, cross-validated over the queries: for the hybrid ceiling
(:mod:`bench.bench_hybrid_ceiling`), which scores every configuration offline and asks what
choosing among them on held-out folds would really give."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def cross_validate(
    per: dict[str, np.ndarray], qids: Sequence[str], k: int, seed: int
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Tune's selection on tune's folds: the best mean on k-1 folds (near ties within ``TIE`` to
    the lower id: every configuration here has the same vector memory and no latency measured,
    tune's first two tie-break keys), scored on the fold left out. Held-out score per query."""
    from ragsonde.tune.select import TIE, folds_of

    names = sorted(per)
    m = np.stack([per[n] for n in names])
    col = {q: i for i, q in enumerate(qids)}
    held = np.zeros(len(qids))
    folds = folds_of(qids, k, seed)
    chosen = []
    for i, fold in enumerate(folds):
        train = [col[q] for j, f in enumerate(folds) if j != i for q in f]
        out = [col[q] for q in fold]
        means = m[:, train].mean(axis=1)
        pick = int(np.flatnonzero(means >= means.max() - TIE)[0])
        held[out] = m[pick, out]
        chosen.append(
            {
                "fold": i,
                "chosen": names[pick],
                "train_ndcg": round(float(means[pick]), 4),
                "held_out_ndcg": round(float(m[pick, out].mean()), 4),
            }
        )
    return held, chosen


def cv_summary(per: dict[str, np.ndarray], qids: Sequence[str]) -> dict[str, Any]:
    from ragsonde.tune.select import SEED, SPREAD_SPLITS

    held, folds = cross_validate(per, qids, 5, SEED)
    others = [
        float(cross_validate(per, qids, 5, SEED + 1 + s)[0].mean()) for s in range(SPREAD_SPLITS)
    ]
    best = max(per, key=lambda n: (per[n].mean(), n))
    return {
        "configurations": len(per),
        "seed": SEED,
        "folds": 5,
        "held_out_ndcg": round(float(held.mean()), 4),
        "held_out_se": round(float(held.std(ddof=1) / np.sqrt(len(held))), 4),
        "per_fold": folds,
        "spread": {
            "seeds": [SEED + 1 + s for s in range(SPREAD_SPLITS)],
            "mean": round(float(np.mean(others)), 4),
            "min": round(min(others), 4),
            "max": round(max(others), 4),
            "held_out": [round(x, 4) for x in others],
        },
        "in_sample_max": {"config": best, "ndcg@10": round(float(per[best].mean()), 4)},
    }
