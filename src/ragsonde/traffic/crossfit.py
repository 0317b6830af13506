"""Calibrating ``predicted`` on the labelled part of the traffic, by cross-fitting.

When a labelled benchmark covers some of the traffic's queries, ``predicted`` becomes a fitted
estimate of each query's nDCG@10: a logistic model (:mod:`ragsonde.traffic.logistic`) on the
percentiles, among the collection's own sentences, of the default combination's signals: the
combination re-weighted on the labels. A labelled
query is predicted by the model fitted on the other folds (never on its own label); the
unlabelled ones by the model fitted on every labelled query. The out-of-fold predictions give
the report an honest measure of how well the fit ranks the labelled queries.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from ragsonde.traffic.calibration import Calibration
from ragsonde.traffic.logistic import features, fit, predict

__all__ = ["LABELS_UNUSED", "MIN_LABELLED", "WEAK_NDCG", "CrossFit", "crossfit"]

#: Fewer labelled queries than this: the fixed combination stays.
MIN_LABELLED = 20
#: What ``combination`` says when ``--labels`` matched too few queries (the fixed combination
#: stays, and a run's history hash reads it as a run without labels).
LABELS_UNUSED = "; --labels not used"
#: A labelled query is weak when its nDCG@10 is below this.
WEAK_NDCG = 0.3


class CrossFit(BaseModel):
    """What the cross-fitting did, for the report."""

    model_config = ConfigDict(extra="forbid")

    n_labelled: int
    folds: int
    features: list[str]
    out_of_fold_spearman: float | None
    """Spearman of the out-of-fold predictions with the labelled queries' nDCG@10."""
    weak_below: float
    """predicted below this is weak: the cut that flags as many labelled queries as have
    nDCG@10 below :data:`WEAK_NDCG` (the out-of-fold predictions' quantile at that share)."""


def _spearman(a: Sequence[float], b: Sequence[float]) -> float | None:
    def ranks(v: Sequence[float]) -> list[float]:
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r

    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb, strict=True))
    sa = math.sqrt(sum((x - ma) ** 2 for x in ra))
    sb = math.sqrt(sum((y - mb) ** 2 for y in rb))
    return round(cov / (sa * sb), 4) if sa and sb else None


def crossfit(
    rows: Sequence[Mapping[str, float]],
    labels: Mapping[int, float],
    calibration: Calibration,
    *,
    signals: Sequence[str],
    folds: int = 5,
    seed: int = 0,
) -> tuple[list[float], CrossFit] | None:
    """``predicted`` for every row (``rows[i]``: its signals), fitted on ``labels`` (row index
    -> nDCG@10 in [0, 1]) with the percentiles of ``signals`` as features (the fixed
    combination's: the combination is re-weighted, not replaced); None when fewer than
    :data:`MIN_LABELLED` rows are labelled."""
    if len(labels) < MIN_LABELLED:
        return None
    names = [n for n in signals if n in calibration.values]
    x = features(rows, calibration, names)
    labelled = sorted(labels)
    y = np.array([min(1.0, max(0.0, labels[i])) for i in labelled])
    predicted = predict(x, fit(x[labelled], y))
    order = list(range(len(labelled)))
    random.Random(seed).shuffle(order)  # noqa: S311 - a fold assignment, not a secret
    k = min(folds, len(labelled))
    for f in range(k):
        test = order[f::k]
        train = [i for i in order if i not in set(test)]
        w = fit(x[[labelled[i] for i in train]], y[train])
        predicted[[labelled[i] for i in test]] = predict(x[[labelled[i] for i in test]], w)
    out = [float(v) for v in predicted]
    held = sorted(out[i] for i in labelled)
    n_weak = int((y < WEAK_NDCG).sum())
    cut = held[n_weak] if n_weak < len(held) else 1.0
    info = CrossFit(
        weak_below=round(cut, 6),
        n_labelled=len(labelled),
        folds=k,
        features=names,
        out_of_fold_spearman=_spearman([out[i] for i in labelled], list(y)),
    )
    return out, info
