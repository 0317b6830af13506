"""Which queries to judge next: a sampling plan that narrows the interval most, and an estimate
that stays unbiased under it.

The rectifier term of PPI (``mean(y - f)`` over the labelled queries) carries most of the
variance, and it is largest where the predictions are least sure. So the unlabelled queries are
stratified by their predicted effectiveness (quantile strata), and each is drawn with a
probability proportional to its stratum's spread (Neyman allocation) times its traffic weight.
The spread is ``sqrt(f (1 - f))`` of the stratum's mean prediction (a metric in [0, 1] spreads
most where it is predicted near the middle), not the labelled queries' residuals: allocating by
the labels just drawn made the weights depend on them, and on a SciFact slice those intervals
came out narrower than their real spread (coverage 0.87 instead of 0.95).
Probabilities are capped at 1 and never below a floor, so every query can be drawn.

The draw is systematic (a random start, steps of one, along the cumulated probabilities), so
exactly ``n`` queries come out with the planned probabilities. Each query's probability of being
labelled in all is kept: ``p = n0 / N + (1 - n0 / N) * pi`` (the ``n0`` labels already there
taken as a uniform sample), and the estimate weighs a labelled query by ``1 / p``
(``estimate_metric(..., probabilities=plan.probabilities)``, ``eval --estimate --plan-file``),
so judging the planned queries first does not bias it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ragsonde.errors import QueryValidationError
from ragsonde.estimate.crossfit import crossfit
from ragsonde.estimate.estimate import features
from ragsonde.estimate.ppi import ppi_mean
from ragsonde.models.prediction import QueryPrediction

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "JudgingPlan",
    "PlannedQuery",
    "Stratum",
    "labels_for_width",
    "plan_judging",
]

DEFAULT_STRATA = 4
#: No query's probability falls below this share of the average: all stay drawable.
FLOOR = 0.2


class PlannedQuery(BaseModel):
    """One query to judge, with the probability it was drawn with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    query_id: str
    text: str = ""
    stratum: int
    predicted: float = Field(description="Its predicted metric (cross-fitted signals).")
    probability: float = Field(gt=0.0, le=1.0, description="Its chance to be in this plan.")
    labelled_probability: float = Field(
        gt=0.0, le=1.0, description="Its chance to be labelled in all (earlier labels counted)."
    )


class Stratum(BaseModel):
    """One stratum of predicted effectiveness."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    predicted_from: float
    predicted_to: float
    queries: int
    labelled: int
    spread: float = Field(description="sqrt(f (1 - f)) of its mean prediction: its allocation.")
    planned: int


class JudgingPlan(BaseModel):
    """``ragsonde judge --plan N``: the queries to judge first, and what they buy."""

    model_config = ConfigDict(extra="forbid")

    kind: str = "judging-plan"
    metric: str
    queries_total: int
    labelled_now: int
    width_now: float | None = Field(description="The 95 % interval's width with today's labels.")
    strata: list[Stratum]
    plan: list[PlannedQuery]
    target_width: float | None = None
    labels_for_target: int | None = Field(
        default=None, description="Labelled queries in all that reach target_width (estimated)."
    )
    more_for_target: int | None = Field(
        default=None, description="How many more judged queries that is, beyond today's."
    )
    probabilities: dict[str, float] = Field(
        default_factory=dict,
        description="Every query's chance to be labelled in all under this plan (query id -> p): "
        "planned_estimate weighs labels by 1 / p.",
    )

    @property
    def queued(self) -> list[str]:
        """The planned query ids, in the order to judge them."""
        return [p.query_id for p in self.plan]


def _strata(pred: NDArray[np.float64], k: int) -> NDArray[np.int64]:
    import numpy as np

    edges = np.quantile(pred, np.linspace(0, 1, k + 1)[1:-1])
    return np.searchsorted(edges, pred, side="right").astype(np.int64)


def _capped(raw: NDArray[np.float64], n: int) -> NDArray[np.float64]:
    """Probabilities proportional to ``raw`` summing to ``n``, none above 1."""
    import numpy as np

    pi = np.zeros_like(raw)
    fixed = np.zeros(len(raw), dtype=bool)
    for _ in range(len(raw)):
        left = n - fixed.sum()
        free = raw * ~fixed
        pi = np.where(fixed, 1.0, left * free / free.sum())
        over = (pi > 1.0) & ~fixed
        if not over.any():
            break
        fixed |= over
    return np.minimum(pi, 1.0)


def _systematic(pi: NDArray[np.float64], rng: np.random.Generator) -> list[int]:
    """Indices drawn systematically along the cumulated probabilities (sum(pi) of them)."""
    import numpy as np

    order = rng.permutation(len(pi))
    cum = np.cumsum(pi[order])
    points = rng.uniform() + np.arange(round(float(cum[-1])))
    return sorted(int(order[i]) for i in np.searchsorted(cum, points, side="right"))


def plan_judging(
    ids: Sequence[str],
    gold: Mapping[str, float],
    predictions: Sequence[QueryPrediction],
    n: int,
    *,
    metric: str = "ndcg@10",
    weights: Mapping[str, float] | None = None,
    texts: Mapping[str, str] | None = None,
    strata: int = DEFAULT_STRATA,
    target_width: float | None = None,
    seed: int = 0,
) -> JudgingPlan:
    """Plan ``n`` of the unlabelled ``ids`` to judge next. ``gold``: the labelled queries'
    metric; ``predictions``: any predictor's, for every query (their signals are cross-fitted
    on the labelled queries); ``weights``: traffic weights."""
    import numpy as np

    signals = features(ids, predictions).matrix
    if signals.shape[1] == 0:
        raise QueryValidationError("plan: the predictions carry no signals.", field="plan")

    lab = np.asarray([q in gold for q in ids], dtype=bool)
    unl = np.flatnonzero(~lab)
    if not len(unl):
        raise QueryValidationError(
            f"plan {n}: nothing to plan, every one of the {len(ids)} queries is labelled.",
            field="plan",
        )
    if not 0 < n <= len(unl):
        raise QueryValidationError(
            f"plan {n}: expected 1 to {len(unl)} (the unlabelled queries).", field="plan"
        )
    y = np.asarray([gold[q] for q in ids if q in gold])
    pred = np.empty(len(ids))
    fit = crossfit(signals[lab], y, signals[~lab], seed=seed)
    pred[lab], pred[~lab] = fit.labeled, fit.unlabeled.mean(axis=1)
    where = _strata(pred, strata)
    spread = np.empty(strata)
    for h in range(strata):
        mean_f = float(pred[where == h].mean()) if (where == h).any() else 0.5
        spread[h] = math.sqrt(max(mean_f * (1 - mean_f), 0.01))
    t = np.asarray([float((weights or {}).get(q, 1.0)) for q in ids])
    raw = t * np.maximum(spread[where], 1e-6)
    raw = np.maximum(raw, FLOOR * raw.mean())
    pi = np.zeros(len(ids))
    pi[unl] = _capped(raw[unl], n)
    # the chance a query would have had, were it unlabelled: for the ones labelled already
    scale = n / raw[unl].sum()
    pi[lab] = np.minimum(raw[lab] * scale, 1.0)
    share = lab.sum() / len(ids)
    p_all = share + (1 - share) * pi
    drawn = _systematic(pi[unl], np.random.default_rng(seed))
    chosen = [int(unl[i]) for i in drawn]
    width_now = _width(y, pred, lab)
    need = labels_for_width(width_now, int(lab.sum()), target_width) if target_width else None
    return JudgingPlan(
        metric=metric,
        queries_total=len(ids),
        labelled_now=int(lab.sum()),
        width_now=width_now,
        strata=[
            Stratum(
                index=h,
                predicted_from=float(pred[where == h].min()) if (where == h).any() else 0.0,
                predicted_to=float(pred[where == h].max()) if (where == h).any() else 0.0,
                queries=int((where == h).sum()),
                labelled=int((lab & (where == h)).sum()),
                spread=float(spread[h]),
                planned=sum(1 for i in chosen if where[i] == h),
            )
            for h in range(strata)
        ],
        plan=[
            PlannedQuery(
                query_id=ids[i],
                text=(texts or {}).get(ids[i], ""),
                stratum=int(where[i]),
                predicted=float(pred[i]),
                probability=float(min(max(pi[i], 1e-9), 1.0)),
                labelled_probability=float(min(max(p_all[i], 1e-9), 1.0)),
            )
            for i in chosen
        ],
        target_width=target_width,
        labels_for_target=need,
        more_for_target=None if need is None else max(0, need - int(lab.sum())),
        probabilities={q: float(min(max(p, 1e-9), 1.0)) for q, p in zip(ids, p_all, strict=True)},
    )


def _width(y: NDArray[np.float64], pred: NDArray[np.float64], lab: NDArray[np.bool_]) -> float:
    return ppi_mean(y, pred[lab], pred[~lab]).width if (~lab).any() else 0.0


def labels_for_width(width: float, n: int, target: float | None) -> int | None:
    """Labelled queries that bring an interval of ``width`` from ``n`` labels to ``target``:
    the width shrinks as 1 / sqrt(n), so ``n * (width / target) ** 2``."""
    if target is None or target <= 0 or width <= 0:
        return None
    return math.ceil(n * (width / target) ** 2)
