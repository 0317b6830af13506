"""One metric's estimate over a partly labelled benchmark, from any predictors.

>>> est = estimate_metric(gold, ids, predictions)           # doctest: +SKIP
>>> est.method, round(est.low, 3), round(est.high, 3)       # doctest: +SKIP
('cross-ppi++', 0.612, 0.701)

How the method is chosen:

* no predictions: the classical mean of the labelled queries (``classical``);
* signals, and at least :data:`MIN_CROSSFIT` labelled queries: the signals of every source
  are combined by a ridge regression cross-fitted on the labelled queries (``cross-ppi++``);
* otherwise, a source's own ``predicted`` value (``ppi++``).

Every estimate carries the classical interval over the same labelled queries beside it. Both
take Student's t on n − 1 degrees of freedom (n labelled; n − 2 for a ``lam`` tuned above
0), not the normal quantile ``ppi_py`` uses: on SciFact, 30 skewed nDCG values left the
normal interval at 0.92 coverage (``bench/bench_estimate.py``), the t interval at 0.93 and
above.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ragsonde.errors import QueryValidationError
from ragsonde.estimate.crossfit import crossfit
from ragsonde.estimate.ppi import (
    Interval,
    binary_bounds,
    classical_mean,
    constant_bounds,
    crossppi_mean,
    effective_size,
    ppi_mean,
)
from ragsonde.models.estimate import Bounds, Method, MetricEstimate
from ragsonde.models.prediction import QueryPrediction

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = [
    "MIN_CROSSFIT",
    "Features",
    "estimate_difference",
    "estimate_metric",
    "estimate_metrics",
    "features",
    "within",
]

#: Labelled queries needed before signals are fitted to them (two folds of two).
MIN_CROSSFIT = 8


@dataclass(frozen=True)
class Features:
    """Predictions laid out per query: a signal matrix and, where every query has one, the
    sources' mean ``predicted`` value."""

    ids: list[str]
    matrix: NDArray[np.float64]
    names: list[str]
    predicted: NDArray[np.float64] | None
    sources: list[str]


def features(ids: Sequence[str], predictions: Sequence[QueryPrediction]) -> Features:
    """The signals of every source for ``ids`` (a column per ``source.signal``; a query without
    one gets the column's mean), and the sources' ``predicted`` when every query has it."""
    import numpy as np

    if isinstance(ids, str):  # "q1" was the queries 'q' and '1'
        raise QueryValidationError("ids: give a list of query ids, not one string.", field="ids")
    by_query: dict[str, dict[str, float]] = {q: {} for q in ids}
    predicted: dict[str, list[float]] = {q: [] for q in ids}
    sources: list[str] = []
    for p in predictions:
        if p.query_id not in by_query:
            continue
        if p.source not in sources:
            sources.append(p.source)
        for name, value in p.signals.items():
            by_query[p.query_id][f"{p.source}.{name}"] = value
        if p.predicted is not None:
            predicted[p.query_id].append(p.predicted)
    names = sorted({name for row in by_query.values() for name in row})
    matrix = np.full((len(ids), len(names)), np.nan)
    for i, q in enumerate(ids):
        for j, name in enumerate(names):
            matrix[i, j] = by_query[q].get(name, np.nan)
    if names:
        means = np.nanmean(matrix, axis=0)
        matrix = np.where(np.isnan(matrix), means[None, :], matrix)
    pred = (
        np.asarray([sum(v) / len(v) for v in (predicted[q] for q in ids)])
        if all(predicted[q] for q in ids) and ids
        else None
    )
    return Features(list(ids), matrix, names, pred, sources)


def within(iv: Interval, span: tuple[float, float] = (-math.inf, math.inf)) -> Bounds:
    """``iv`` cut to ``span``, the range the quantity lives in (a metric's [0, 1], a
    difference's [-1, 1]): the part outside holds no possible value, so the cut interval covers
    as often as the whole one. The estimate is cut too: PPI++'s can leave the range (predictions
    lower on the labelled queries than on the rest gave an nDCG of 1.006 above its interval's
    1), and an interval wholly outside it shrinks to the nearest end, never low above high."""
    lo, hi = span

    def cut(x: float) -> float:
        return min(hi, max(lo, x))

    return Bounds(estimate=cut(iv.estimate), low=cut(iv.low), high=cut(iv.high))


def _estimate(
    gold: NDArray[np.float64],
    lab: NDArray[np.bool_],
    feats: Features,
    *,
    alpha: float,
    seed: int,
    clip: tuple[float, float] = (0.0, 1.0),
    w: NDArray[np.float64] | None = None,
    finite: bool = False,
    identical: bool = False,
) -> MetricEstimate:
    """``w``: the labelled queries' sampling weights (1 / their chance to be labelled, under a
    judging plan); the predictions are then imputed over every query, not only the unlabelled
    ones, which a plan's draw has made a biased subset. ``finite``: the mean over these queries
    themselves (:mod:`ragsonde.estimate.ppi`; a uniform sample only, so not with ``w``).

    Labelled values that are all the same have no spread, so every interval from it has no
    width; the interval is then :func:`~ragsonde.estimate.ppi.constant_bounds` (uniform samples
    only), unless ``identical``: two systems whose signals agree on every query, so that a
    difference of 0 on each labelled one is not a sample of unknown ones."""
    import numpy as np

    finite = finite and w is None
    population = len(lab) if finite else None
    classical = classical_mean(gold, w=w, alpha=alpha, small_sample=True, population=population)
    n, big_n = int(lab.sum()), int((~lab).sum())
    method: Method = "classical"
    note = ""
    iv = classical
    if big_n == 0:
        note = "every query is labelled: nothing to predict"
    elif feats.names and n >= MIN_CROSSFIT:
        x = feats.matrix
        if feats.predicted is not None:
            x = _with(x, feats.predicted)
        fit = crossfit(x[lab], gold, x[~lab], seed=seed, clip=clip)
        method = "cross-ppi++"
        if w is None:
            iv = crossppi_mean(
                gold, fit.labeled, fit.unlabeled, alpha=alpha, small_sample=True, finite=finite
            )
        else:
            every = np.empty(len(lab))
            every[lab], every[~lab] = fit.labeled, fit.unlabeled.mean(axis=1)
            iv = ppi_mean(gold, fit.labeled, every, w=w, alpha=alpha, small_sample=True)
    elif feats.predicted is not None:
        imputed = feats.predicted if w is not None else feats.predicted[~lab]
        iv = ppi_mean(
            gold, feats.predicted[lab], imputed, w=w, alpha=alpha, small_sample=True,
            finite=finite,
        )  # fmt: skip
        method = "ppi++"
    elif not feats.sources:
        note = "no predictions: the labelled queries alone"
    elif not feats.names:
        note = "a predicted value is missing for some queries: the labelled queries alone"
    else:
        note = f"{n} labelled queries: too few to fit the signals to (at least {MIN_CROSSFIT})"
    ignored = method != "classical" and iv.lam == 0.0
    if ignored:  # it read "cross-ppi++, 26 predicted by scores" with nothing predicted in it
        note = "the predictions got no weight (lam 0): the interval is the labelled queries' own"
    known = finite and big_n == 0  # every query of the benchmark labelled: its mean is known
    if not known and not identical and np.ptp(gold) == 0.0:
        # no spread, so every interval above has no width: the exact one for a constant sample
        # (a plan's weighted one: at its effective size, Korn and Graubard 1998)
        size = n if w is None else effective_size(w)
        iv = classical = _constant(float(gold[0]), size, big_n, clip, alpha, population)
        method = "classical"
        note = (
            f"every labelled value is {gold[0]:.4g}: an interval from their spread would have no "
            f"width, so it is the exact bound for any metric in [{clip[0]:g}, {clip[1]:g}]"
        )
        if w is not None:
            note += (
                f", at the plan's effective sample size ({size} of {n} labels: Kish's "
                "(sum w)^2 / sum w^2, as Korn and Graubard do for survey proportions)"
            )
    elif (
        not known
        and (method == "classical" or ignored)
        and w is None
        and clip == (0.0, 1.0)
        and _binary(gold)
    ):
        # 0/1 labels alone (a hit rate): the normal interval is too narrow near 0 or 1; so it
        # is with predictions of no weight, where PPI++'s interval is that normal one (a gate
        # passed on it that the exact one fails). Beside a PPI++ estimate that weighs its
        # predictions, `classical` stays the normal one: the width ratio compares like with like.
        exact = _exact_binary(gold, big_n, alpha, population)
        classical = exact
        iv = exact if method == "classical" else replace(iv, low=exact.low, high=exact.high)
        note = "; ".join(filter(None, [note, "0/1 labels: the exact (Clopper-Pearson) interval"]))
    if finite:
        note = "; ".join(filter(None, [note, "of the benchmark's own mean (finite population)"]))
    cut = within(iv, clip)
    return MetricEstimate(
        estimate=cut.estimate,
        low=cut.low,
        high=cut.high,
        n_labeled=n,
        n_predicted=big_n if method != "classical" else 0,
        method=method,
        sources=feats.sources if method != "classical" else [],
        lam=iv.lam if method != "classical" else None,
        classical=within(classical, clip),
        note=note,
    )


def _binary(gold: NDArray[np.float64]) -> bool:
    import numpy as np

    return bool(np.all((gold == 0.0) | (gold == 1.0)))


def _exact_binary(
    gold: NDArray[np.float64], big_n: int, alpha: float, population: int | None
) -> Interval:
    n, hits = len(gold), int(gold.sum())
    low, high = binary_bounds(hits, n, alpha=alpha, population=population)
    return Interval(hits / n, 0.0, low, high, n, big_n, 0.0)


def _constant(
    value: float,
    n: int,
    big_n: int,
    span: tuple[float, float],
    alpha: float,
    population: int | None,
) -> Interval:
    low, high = constant_bounds(value, n, span, alpha=alpha, population=population)
    return Interval(value, 0.0, low, high, n, big_n, 0.0)


def _with(x: NDArray[np.float64], column: NDArray[np.float64]) -> NDArray[np.float64]:
    import numpy as np

    return np.hstack([x, column[:, None]])


def estimate_metric(
    gold: Mapping[str, float],
    ids: Sequence[str],
    predictions: Sequence[QueryPrediction] = (),
    *,
    alpha: float = 0.05,
    seed: int = 0,
    probabilities: Mapping[str, float] | None = None,
    finite: bool = False,
) -> MetricEstimate:
    """The mean of a per-query metric over ``ids``, from its ``gold`` values on the labelled
    queries and the ``predictions`` for all of them. ``probabilities``: each query's chance to
    be labelled under a judging plan (:mod:`ragsonde.estimate.plan`); labels weigh 1 / p.
    ``finite``: the mean over ``ids`` themselves (the metric with every one of them labelled),
    not over the distribution they were drawn from; narrower, and exact when all are labelled."""
    import numpy as np

    feats = features(ids, predictions)
    _check_ids(ids, gold)
    lab = np.asarray([q in gold for q in ids], dtype=bool)
    y = np.asarray([gold[q] for q in ids if q in gold], dtype=np.float64)
    _check_in(y, (0.0, 1.0), "gold")
    w = None
    if probabilities is not None:
        unknown = next((q for q in ids if q in gold and q not in probabilities), None)
        if unknown is not None:  # read as p = 1, its label weighed as if it had to be drawn
            raise QueryValidationError(
                f"probabilities: labelled query {unknown!r} has no chance to be labelled; give "
                "every labelled query's (the judging plan's probabilities).",
                field="probabilities",
            )
        p = np.asarray([probabilities[q] for q in ids if q in gold], dtype=np.float64)
        if not np.all((p > 0.0) & (p <= 1.0)):
            raise QueryValidationError(
                "probabilities: each labelled query's chance must be in (0, 1].",
                field="probabilities",
            )
        w = 1.0 / p
    return _estimate(y, lab, feats, alpha=alpha, seed=seed, w=w, finite=finite)


def _check_ids(ids: Sequence[str], *golds: Mapping[str, float]) -> None:
    """A query listed twice would count its label twice (the CLI refuses such a benchmark); a
    label for a query not in ``ids`` would be left out without a word, the interval resting on
    fewer labels than were given."""
    seen: set[str] = set()
    for q in ids:
        if q in seen:
            raise QueryValidationError(f"ids: query {q!r} is listed twice.", field="ids")
        seen.add(q)
    stray = next((q for gold in golds for q in gold if q not in seen), None)
    if stray is not None:
        raise QueryValidationError(
            f"gold: query {stray!r} is labelled but not among the {len(seen)} ids estimated "
            "over; list every query, labelled or not, in ids.",
            field="gold",
        )


def _check_in(values: NDArray[np.float64], span: tuple[float, float], name: str) -> None:
    # NaN passes both comparisons: the interval's own reader refuses it (finite numbers only)
    if values.size and (values.min() < span[0] or values.max() > span[1]):
        raise QueryValidationError(
            f"{name}: a metric's values lie in [{span[0]:g}, {span[1]:g}]; got "
            f"{values.min():g} to {values.max():g}.",
            field=name,
        )


def estimate_difference(
    gold_a: Mapping[str, float],
    gold_b: Mapping[str, float],
    ids: Sequence[str],
    predictions_a: Sequence[QueryPrediction] = (),
    predictions_b: Sequence[QueryPrediction] = (),
    *,
    alpha: float = 0.05,
    seed: int = 0,
    finite: bool = False,
) -> MetricEstimate:
    """The paired difference B − A of a per-query metric on the same queries: the per-query
    differences estimated as one mean, from both systems' signals (a query counts as labelled
    when both systems have its gold value)."""
    import numpy as np

    fa, fb = features(ids, predictions_a), features(ids, predictions_b)
    _check_ids(ids, gold_a, gold_b)
    both = Features(
        list(ids),
        np.hstack([fa.matrix, fb.matrix]),
        [f"a.{n}" for n in fa.names] + [f"b.{n}" for n in fb.names],
        fb.predicted - fa.predicted
        if fa.predicted is not None and fb.predicted is not None
        else None,
        list(dict.fromkeys(fa.sources + fb.sources)),
    )
    lab = np.asarray([q in gold_a and q in gold_b for q in ids], dtype=bool)
    d = np.asarray(
        [gold_b[q] - gold_a[q] for q in ids if q in gold_a and q in gold_b], dtype=np.float64
    )
    _check_in(d, (-1.0, 1.0), "gold")
    seen = bool(fa.names) or fa.predicted is not None  # no predictions: nothing to tell by
    identical = seen and fa.names == fb.names and bool(np.array_equal(fa.matrix, fb.matrix))
    identical = identical and _same(fa.predicted, fb.predicted)
    return _estimate(
        d, lab, both, alpha=alpha, seed=seed, clip=(-1.0, 1.0), finite=finite, identical=identical
    )


def _same(a: NDArray[np.float64] | None, b: NDArray[np.float64] | None) -> bool:
    import numpy as np

    return (a is None and b is None) or (
        a is not None and b is not None and bool(np.array_equal(a, b))
    )


def estimate_metrics(
    per_query: Mapping[str, Mapping[str, float]],
    ids: Sequence[str],
    predictions: Sequence[QueryPrediction] = (),
    *,
    names: Sequence[str] | None = None,
    alpha: float = 0.05,
    probabilities: Mapping[str, float] | None = None,
    finite: bool = False,
) -> dict[str, MetricEstimate]:
    """Every metric of ``per_query`` (labelled query -> metric -> value) estimated over ``ids``
    (labelled and unlabelled queries), or only ``names``; ``finite``: see
    :func:`estimate_metric`."""
    wanted = names or sorted({m for row in per_query.values() for m in row})
    return {
        m: estimate_metric(
            {q: row[m] for q, row in per_query.items() if m in row},
            ids,
            predictions,
            alpha=alpha,
            probabilities=probabilities,
            finite=finite,
        )
        for m in wanted
    }
