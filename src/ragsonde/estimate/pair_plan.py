"""Which queries to judge next for a comparison of two systems (``judge --plan N --versus``).

The quantity is the paired difference B − A of a metric. Label-free, two things are known of
each query before anyone judges it (:mod:`ragsonde.estimate.design`):

* whether its two rankings are identical to the metric's depth: then its difference is 0
  under any labels, and it is never planned (probability 0, valid because its residual is
  deterministically 0);
* how far the two top ``k`` lists differ (:func:`~ragsonde.estimate.design.rank_spread`, a
  guess of ``|d|``).

The other queries are stratified by that spread (quantile strata), and the labels allocated to
the strata by Neyman allocation (``n_h`` proportional to ``N_h S_h``, ``S_h`` the root mean
square spread of stratum ``h``, floored at :data:`~ragsonde.estimate.plan.FLOOR` of the mean so
a poor guess cannot starve a stratum), one label at a time to the stratum where it removes the
most variance, after each stratum has :data:`MIN_PER_STRATUM` (so every such query can be drawn
and each stratum's spread can be estimated). Labels already there count toward their stratum.
Within a stratum the new queries are drawn uniformly; each query's probability to be labelled
in all is ``n_h / N_h``, kept in the plan file, and ``compare``/``eval --versus --plan-file``
estimate the difference by :func:`~ragsonde.estimate.design.stratified_difference`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragsonde.errors import QueryValidationError
from ragsonde.estimate.crossfit import crossfit
from ragsonde.estimate.design import EXACT, rank_spread
from ragsonde.estimate.estimate import MIN_CROSSFIT, within
from ragsonde.estimate.plan import FLOOR

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from ragsonde.models.estimate import MetricEstimate

__all__ = [
    "ComparisonPlan",
    "PairQuery",
    "PairStratum",
    "estimate_planned_difference",
    "estimate_planned_metric",
    "plan_comparison",
]

#: Strata of the non-exact queries (fewer when the labels cannot give each MIN_PER_STRATUM).
DEFAULT_PAIR_STRATA = 4
#: Labels each stratum gets first (2 estimate its spread; 3 keep its t interval honest).
MIN_PER_STRATUM = 3


class PairQuery(BaseModel):
    """One query to judge for the comparison, with its chance to be labelled."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    query_id: str
    text: str = ""
    stratum: int
    spread: float = Field(description="How far its two top-k lists differ (a guess of |d|).")
    probability: float = Field(gt=0.0, le=1.0, description="Its chance to be labelled in all.")


class PairStratum(BaseModel):
    """One stratum of the queries whose two rankings differ."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    spread_from: float
    spread_to: float
    queries: int
    labelled: int = Field(description="Labelled before the plan.")
    spread: float = Field(description="Its root mean square spread: its Neyman allocation.")
    planned: int = Field(description="Queries of it this plan adds.")
    probability: float = Field(description="Each of its queries' chance to be labelled in all.")


class ComparisonPlan(BaseModel):
    """``ragsonde judge --plan N --versus``: the queries to judge first for B − A."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["comparison-plan"] = "comparison-plan"
    metric: str
    depth: int = Field(description="The depth the exact queries' rankings agree to.")
    systems: list[str] = Field(description="A and B, as named when planned.")
    queries_total: int
    labelled_now: int
    exact: int = Field(description="Queries whose two rankings agree to depth: never planned.")
    strata: list[PairStratum]
    plan: list[PairQuery]
    stratum_of: dict[str, int] = Field(
        description=f"Every query's stratum ({EXACT}: exact, its difference 0 under any labels)."
    )
    probabilities: dict[str, float] = Field(
        description="Every query's chance to be labelled in all (0 for the exact ones)."
    )

    @property
    def queued(self) -> list[str]:
        """The planned query ids, in the order to judge them."""
        return [p.query_id for p in self.plan]


def _strata(spread: list[float], k: int) -> list[int]:
    """Quantile strata of ``spread`` (0 the lowest), empty ones dropped."""
    import numpy as np

    values = np.asarray(spread)
    edges = np.quantile(values, np.linspace(0, 1, k + 1)[1:-1])
    raw = np.searchsorted(edges, values, side="right")
    used = sorted(set(raw.tolist()))
    return [used.index(int(h)) for h in raw]


def _allocate(sizes: list[int], have: list[int], rms: list[float], n: int) -> list[int]:
    """Labels per stratum in all: each brought to MIN_PER_STRATUM (or its size), then one
    at a time where ``N_h**2 S_h**2 (1/c_h - 1/(c_h + 1))`` (the variance it removes) is largest."""
    floor = FLOOR * sum(rms) / len(rms)
    s = [max(r, floor, 1e-9) for r in rms]
    count = list(have)
    budget = n
    for h, size in enumerate(sizes):
        add = max(0, min(MIN_PER_STRATUM, size) - count[h])
        count[h] += add
        budget -= add
    if budget < 0:
        raise QueryValidationError(
            f"plan {n}: the {len(sizes)} strata need {n - budget} labels to have "
            f"{MIN_PER_STRATUM} each.",
            field="plan",
        )
    for _ in range(budget):
        open_ = [h for h, size in enumerate(sizes) if count[h] < size]
        if not open_:
            break
        best = max(open_, key=lambda h: (sizes[h] * s[h]) ** 2 / (count[h] * (count[h] + 1)))
        count[best] += 1
    return count


def plan_comparison(
    ids: Sequence[str],
    rankings_a: Mapping[str, Sequence[str]],
    rankings_b: Mapping[str, Sequence[str]],
    labelled: Collection[str],
    n: int,
    *,
    metric: str = "ndcg@10",
    depth: int = 10,
    strata: int = DEFAULT_PAIR_STRATA,
    texts: Mapping[str, str] | None = None,
    systems: tuple[str, str] = ("A", "B"),
    seed: int = 0,
) -> ComparisonPlan:
    """Plan ``n`` more queries to judge for the difference B − A over ``ids`` (see the
    module), given both systems' ranked document ids per query and the ``labelled`` ones."""
    import numpy as np

    spread = {q: rank_spread(rankings_a.get(q, ()), rankings_b.get(q, ()), depth) for q in ids}
    live = [q for q in ids if spread[q] > 0.0]
    free = [q for q in live if q not in labelled]
    if not free:
        raise QueryValidationError(
            f"plan {n}: nothing to plan. Every unlabelled query has the same top {depth} on "
            f"both sides ({len(ids) - len(live)} of {len(ids)} queries agree to depth {depth}), "
            "so its difference is 0 under any labels: are A and B two runs of one setting?",
            field="plan",
        )
    if not 0 < n <= len(free):
        raise QueryValidationError(
            f"plan {n}: expected 1 to {len(free)} (the unlabelled queries whose two rankings "
            f"differ; {len(ids) - len(live)} agree to depth {depth} and need no label).",
            field="plan",
        )
    k = max(1, min(strata, (n + sum(q in labelled for q in live)) // MIN_PER_STRATUM))
    while True:  # fewer strata while the labels cannot give each its first ones
        where = dict(zip(live, _strata([spread[q] for q in live], k), strict=True))
        groups = [[q for q in live if where[q] == h] for h in range(max(where.values()) + 1)]
        have = [sum(q in labelled for q in g) for g in groups]
        rms = [float(np.sqrt(np.mean([spread[q] ** 2 for q in g]))) for g in groups]
        try:
            count = _allocate([len(g) for g in groups], have, rms, n)
            break
        except QueryValidationError:
            if k == 1:
                raise
            k -= 1
    rng = np.random.default_rng(seed)
    chosen: list[PairQuery] = []
    for h, g in enumerate(groups):
        pool = [q for q in g if q not in labelled]
        p = count[h] / len(g)
        for q in rng.permutation(pool)[: count[h] - have[h]]:
            chosen.append(PairQuery(query_id=str(q), text=(texts or {}).get(str(q), ""),
                                    stratum=h, spread=spread[str(q)], probability=p))  # fmt: skip
    order = rng.permutation(len(chosen))  # judged in this order, no stratum comes last
    return ComparisonPlan(
        metric=metric,
        depth=depth,
        systems=list(systems),
        queries_total=len(ids),
        labelled_now=sum(q in labelled for q in ids),
        exact=len(ids) - len(live),
        strata=[
            PairStratum(
                index=h,
                spread_from=min(spread[q] for q in g),
                spread_to=max(spread[q] for q in g),
                queries=len(g),
                labelled=have[h],
                spread=rms[h],
                planned=count[h] - have[h],
                probability=count[h] / len(g),
            )
            for h, g in enumerate(groups)
        ],
        plan=[chosen[i] for i in order],
        stratum_of={q: where.get(q, EXACT) for q in ids},
        probabilities={
            q: count[where[q]] / len(groups[where[q]]) if q in where else 0.0 for q in ids
        },
    )


def estimate_planned_difference(
    gold_a: Mapping[str, float],
    gold_b: Mapping[str, float],
    ids: Sequence[str],
    plan: ComparisonPlan,
    rankings: tuple[Mapping[str, Sequence[str]], Mapping[str, Sequence[str]]],
    *,
    depth: int,
    predicted: Sequence[float] | None = None,
    signals: NDArray[np.float64] | None = None,
    sources: Sequence[str] = (),
    alpha: float = 0.05,
) -> MetricEstimate:
    """B − A of a metric reading ``depth`` deep, over ``ids``, from the queries both sides have
    gold for, under ``plan`` (:func:`~ragsonde.estimate.design.stratified_difference`);
    ``predicted``: a label-free prediction of each query's difference; else ``signals`` (one
    row per query), fitted to the labelled differences by cross-fitting (a labelled query's
    prediction never saw its label) once there are :data:`~ragsonde.estimate.MIN_CROSSFIT`;
    neither: the design alone. The classical bounds beside it are the design's without a
    prediction."""
    import numpy as np

    from ragsonde.estimate.design import stratified_difference
    from ragsonde.models.estimate import MetricEstimate

    missing = [q for q in ids if q not in plan.stratum_of]
    if missing:
        raise QueryValidationError(
            f"plan: {len(missing)} queries (e.g. {missing[0]}) are not in the plan file; it "
            "was made for another benchmark.",
            field="plan_file",
        )
    strata = np.asarray([plan.stratum_of[q] for q in ids], dtype=np.int64)
    a, b = rankings
    moved = [q for q, h in zip(ids, strata, strict=True)
             if h == EXACT and rank_spread(a.get(q, ()), b.get(q, ()), depth) > 0.0]  # fmt: skip
    if moved:
        raise QueryValidationError(
            f"plan: {len(moved)} queries the plan took as identical to depth {plan.depth} "
            f"differ to depth {depth} (e.g. {moved[0]}): their difference is not 0, and the plan "
            "gave them no labels. Compare a metric reading at most that deep (-m ndcg@10).",
            field="plan_file",
        )
    lab = np.asarray([q in gold_a and q in gold_b for q in ids], dtype=bool)
    d = np.asarray([gold_b[q] - gold_a[q] if q in gold_a and q in gold_b else 0.0 for q in ids])
    base = stratified_difference(d, lab, strata, alpha=alpha)
    f = None if predicted is None else np.asarray(predicted, dtype=np.float64)
    if f is None and signals is not None and signals.shape[1] and lab.sum() >= MIN_CROSSFIT:
        fit = crossfit(signals[lab], d[lab], signals[~lab], clip=(-1.0, 1.0))
        f = np.empty(len(ids))
        f[lab], f[~lab] = fit.labeled, fit.unlabeled.mean(axis=1)
    iv = base if f is None else stratified_difference(d, lab, strata, f, alpha=alpha)

    cut = within(iv, (-1.0, 1.0))
    return MetricEstimate(
        **cut.model_dump(),
        n_labeled=iv.n_labeled,
        n_predicted=iv.n_unlabeled,
        method="stratified-ppi++" if f is not None else "stratified",
        sources=list(sources) if f is not None else [],
        lam=iv.lam if f is not None else None,
        classical=within(base, (-1.0, 1.0)),
        note=f"judging plan: {len(plan.strata)} strata, {plan.exact} queries exact "
        f"(identical to depth {plan.depth})",
    )


def estimate_planned_metric(
    gold: Mapping[str, float], ids: Sequence[str], plan: ComparisonPlan, *, alpha: float = 0.05
) -> MetricEstimate:
    """One system's metric over ``ids`` from its labelled queries under a comparison's
    ``plan``: the stratified mean, the exact queries a stratum like the others (one system's
    metric is not 0 there, so it needs their labels: at least 2)."""
    import numpy as np

    from ragsonde.estimate.design import stratified_difference
    from ragsonde.models.estimate import MetricEstimate

    top = max(plan.stratum_of.values(), default=0) + 1
    try:
        strata = np.asarray([plan.stratum_of[q] if plan.stratum_of[q] != EXACT else top
                             for q in ids], dtype=np.int64)  # fmt: skip
    except KeyError as e:
        raise QueryValidationError(
            f"plan: query {e.args[0]} is not in the plan file; it was made for another benchmark.",
            field="plan_file",
        ) from e
    lab = np.asarray([q in gold for q in ids], dtype=bool)
    y = np.asarray([gold.get(q, 0.0) for q in ids])
    try:
        iv = stratified_difference(y, lab, strata, alpha=alpha)
    except QueryValidationError as e:
        raise QueryValidationError(
            f"{e} One system's estimate under a comparison's plan needs labels among the "
            f"{plan.exact} queries the plan skipped as identical in both systems: judge a few, "
            "or estimate the comparison alone (compare).",
            field="plan_file",
        ) from e
    bounds = within(iv, (0.0, 1.0))
    return MetricEstimate(
        **bounds.model_dump(),
        n_labeled=iv.n_labeled,
        n_predicted=0,
        method="stratified",
        classical=bounds,
        note=f"the labels of a comparison's judging plan, weighed by its {len(plan.strata)} "
        "strata (no predictions)",
    )
