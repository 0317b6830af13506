"""Means with 95 % intervals: the classical one over labelled queries, and prediction-powered
inference (PPI++, Angelopoulos, Duchi and Zrnic 2023) that adds predictions for every query.

With ``n`` labelled queries (gold metric ``y``, prediction ``f``) and ``N`` unlabelled ones
(prediction ``f~``), PPI++ estimates the mean as::

    theta = lam * mean(f~) + mean(y - lam * f)
    se**2 = lam**2 * var(f~) / N + var(y - lam * f) / n

The second term corrects the predictions' bias on the labelled queries, so the estimate is
unbiased whatever the predictions' quality. ``lam`` (power tuning) is chosen from the data to
minimise the variance and clipped into [0, 1]; ``lam = 0`` is the classical estimate, so
worthless predictions fall back to the classical interval.

Sampling weights ``w`` (``1 / inclusion probability``, or traffic weights) are normalised to sum
to the sample's size, as ``ppi_py`` does, so a weighted mean is ``sum(w x) / sum(w)``. Its
variance is the ratio estimator's (``mean(w**2 (x - mean)**2) / n``): ``ppi_py`` takes the
variance of ``w x`` instead, which adds ``mean(x)**2 var(w)`` and so penalises any unequal
weights by the size of the mean rather than its spread (a judging plan's weights would widen
the interval they were drawn to narrow). With equal weights the two are the same.

**The benchmark's own mean** (``finite=True``). ``ppi_py`` estimates the mean of the
distribution the queries come from: the ``N`` unlabelled queries are a sample of it, which is
why their predictions' spread enters the variance (``var(f~) / N``). When the quantity wanted
is the mean over this benchmark's ``M = n + N`` queries, the metric you would get with every
one labelled, the predictions of all ``M`` queries are known numbers and the labelled queries
are a simple random sample of them. The estimate is then the survey-sampling *difference
estimator* (Särndal, Swensson and Wretman 1992, §6.3; Cochran 1977, §2.3 for the correction)::

    theta = lam * mean(f over all M) + mean(y - lam * f)
    se**2 = (1 - n / M) * var(y - lam * f) / n       (var: the sample variance, n - 1)

unbiased over the draw of the labelled queries for any fixed ``lam``, with no term for the
predictions' spread and the finite-population correction ``1 - n / M``; ``lam`` minimises
``var(y - lam * f)``: ``cov(y, f) / var(f)``, clipped into [0, 1]. Tuned on the same labels,
it makes their residuals look tighter than they are (30 labels of a metric with mass at 0 and
1: coverage 0.937 instead of 0.95), so a tuned ``lam`` costs a degree of freedom, as in the
regression estimator (Cochran 1977, §7.3): the variance divides by n - 2 and Student's t takes
n - 2 degrees of freedom (0.943 there; the classical interval's own is 0.945, the skew's).
The classical interval on the same footing is ``mean(y)`` with
``se**2 = (1 - n / M) var(y) / n``. The width ratio of the two is about ``sqrt(1 - rho**2)``
(``rho``: the predictions' correlation with the metric) whatever ``n`` and ``N``, where the
sample-of-a-distribution form pays ``n / N`` more. Both need a uniform sample: a judging
plan's weighted one keeps the first form.

Otherwise the formulas are ``ppi_py``'s (``ppi_mean_ci``, ``classical_mean_ci``,
``crossppi_mean_ci``), computed here in a few lines of NumPy because that package imports numba,
statsmodels and scikit-learn (seconds per process); ``tests/estimate`` checks every number
against ``ppi_py`` on the same inputs, and the weighted variance by coverage under
unequal-probability sampling.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import TYPE_CHECKING

from ragsonde.errors import QueryValidationError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Array = NDArray[np.float64]

__all__ = [
    "Interval",
    "binary_bounds",
    "classical_mean",
    "constant_bounds",
    "crossppi_mean",
    "effective_size",
    "ppi_mean",
    "regression_mean",
    "z_value",
]

#: The smallest labelled sample an interval is computed from.
MIN_LABELED = 2
#: The smallest labelled sample PPI++ tunes ``lam`` on under Student's t: tuning spends a degree
#: of freedom, and fewer labels would leave t one (or none); below it, ``lam`` is 0.
MIN_TUNED = 4


@dataclass(frozen=True)
class Interval:
    """A point estimate, its standard error and its two-sided interval."""

    estimate: float
    se: float
    low: float
    high: float
    n_labeled: int
    n_unlabeled: int
    lam: float
    """The weight of the predictions (0: classical; 1: plain PPI)."""

    @property
    def width(self) -> float:
        return self.high - self.low

    def excludes(self, value: float = 0.0) -> bool:
        """Whether ``value`` lies outside the interval (a significant difference, for 0)."""
        return value < self.low or value > self.high


def z_value(alpha: float) -> float:
    """The two-sided normal quantile: 1.96 for ``alpha = 0.05``."""
    if not 0.0 < alpha < 1.0:
        raise QueryValidationError(f"alpha {alpha}: expected 0 < alpha < 1.", field="alpha")
    return NormalDist().inv_cdf(1.0 - alpha / 2.0)


def _array(values: object, name: str) -> Array:
    import numpy as np

    try:
        arr = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as e:  # "abc": could not convert string to float
        raise QueryValidationError(f"{name} must be finite numbers.", field=name) from e
    if not np.all(np.isfinite(arr)):
        raise QueryValidationError(f"{name} must be finite numbers.", field=name)
    return arr


def _weights(w: object | None, size: int, name: str) -> Array:
    import numpy as np

    if w is None:
        return np.ones(size)
    arr = _array(w, name)
    if arr.shape[0] != size or np.any(arr <= 0):
        raise QueryValidationError(
            f"{name}: expected {size} positive weights, got {arr.shape[0]}.", field=name
        )
    normalised: Array = arr / arr.sum() * size
    return normalised


def _weighted(w: Array, x: Array) -> tuple[float, float]:
    """``(mean, variance)`` of a weighted mean's terms: ``mean(w x)`` with ``w`` summing to
    the size, and ``mean(w**2 (x - mean)**2)`` (the ratio estimator's linearisation)."""
    mean = float((w * x).mean())
    return mean, float((w**2 * (x - mean) ** 2).mean())


def effective_size(w: Array) -> int:
    """Kish's effective size of a weighted sample, ``(sum w)^2 / sum w^2``, rounded down (at
    least 1): ``n`` for equal weights, fewer as the weights spread."""
    return max(1, math.floor(float(w.sum()) ** 2 / float((w * w).sum()) + 1e-9))


def _labeled(y: Array) -> int:
    n = int(y.shape[0])
    if n < MIN_LABELED:
        raise QueryValidationError(
            f"{n} labelled queries: an interval needs at least {MIN_LABELED}.", field="labels"
        )
    return n


def t_value(alpha: float, df: int) -> float:
    """The two-sided quantile of Student's t with ``df`` degrees of freedom."""
    from scipy.stats import t as student

    z_value(alpha)  # checks alpha
    return float(student.ppf(1.0 - alpha / 2.0, df))


def _interval(
    estimate: float,
    se: float,
    alpha: float,
    n: int,
    big_n: int,
    lam: float,
    small_sample: bool = False,
    fitted: int = 0,
    size: int | None = None,
) -> Interval:
    """``fitted``: parameters fitted on the labelled queries beyond the mean (t's degrees of
    freedom are n - 1 - fitted). ``size``: a weighted sample's effective size, Kish's
    ``(sum w)^2 / sum w^2``, which takes n's place in the degrees of freedom."""
    df = (n if size is None else max(2, size)) - 1 - fitted
    quantile = t_value(alpha, df) if small_sample else z_value(alpha)
    half = quantile * se
    return Interval(estimate, se, estimate - half, estimate + half, n, big_n, lam)


def _fpc(n: int, population: int) -> float:
    """The finite-population correction ``1 - n / M`` of a uniform sample of n out of M."""
    if population < n:
        raise QueryValidationError(
            f"population {population}: fewer than the {n} labelled queries.", field="population"
        )
    return 1.0 - n / population


def classical_mean(
    y: object,
    *,
    w: object | None = None,
    alpha: float = 0.05,
    small_sample: bool = False,
    population: int | None = None,
) -> Interval:
    """The mean of the labelled values and its normal interval (``ppi_py.classical_mean_ci``;
    ``small_sample``: Student's t on n - 1 degrees of freedom instead of the normal, with the
    sample variance, divided by n - 1, that t is made for: ``ppi_py`` divides by n, which
    matters nothing to its normal interval but made this one a t-test's narrower cousin).
    ``population``: the labelled values are a uniform sample of that many queries, whose own
    mean is wanted (the variance takes the finite-population correction ``1 - n / M``)."""
    gold = _array(y, "y")
    n = _labeled(gold)
    if population is not None and w is not None:
        raise QueryValidationError(
            "the finite-population correction needs a uniform sample, not weights.", field="w"
        )
    weights = _weights(w, n, "w")
    mean, var = _weighted(weights, gold)
    if population is not None:  # the sample variance (n - 1), as the survey formula has it
        var *= _fpc(n, population) * n / (n - 1)
    elif small_sample:
        var *= n / (n - 1)
    size = None if w is None else effective_size(weights)
    return _interval(mean, math.sqrt(var / n), alpha, n, 0, 0.0, small_sample, size=size)


def constant_bounds(
    value: float,
    n: int,
    span: tuple[float, float],
    *,
    alpha: float = 0.05,
    population: int | None = None,
) -> tuple[float, float]:
    """The interval of a mean when all ``n`` labelled values equal ``value``, for a quantity that
    lives in ``span`` (a metric's [0, 1]): exact, for any distribution in the span.

    Every normal interval above has no width then (the values have no spread), which would say
    the mean is known. It is not: 20 hits out of 20 happen one time in three when the hit rate
    is 0.95. If the mean is ``mu > value``, at most a share ``(hi - mu) / (hi - value)`` of the
    queries can sit at ``value`` (Markov's inequality on ``hi - x``), so ``n`` draws all land
    there with a chance of at most that share to the power ``n``; every mean where that chance
    is below ``alpha / 2`` is refused. Hence ``hi - (hi - value) (alpha / 2) ** (1 / n)``, and
    the same downwards; at an end of the span this is the Clopper-Pearson bound of ``n``
    successes in ``n`` trials. ``population``: the mean of these ``M`` queries themselves, the
    ``n`` drawn without replacement, where the chance is hypergeometric: ``C(K, n) / C(M, n)``
    for ``K`` queries at ``value``; with every query labelled the interval is the value.
    """
    z_value(alpha)  # checks alpha
    lo, hi = span
    if not lo <= value <= hi or n < 1:
        raise QueryValidationError(f"value {value} outside {span}, or no label.", field="y")
    if population is None:
        q = (alpha / 2.0) ** (1.0 / n)
        return lo + (value - lo) * q, hi - (hi - value) * q
    _fpc(n, population)  # checks the population holds the n labels

    def log_all_there(k: int) -> float:  # log C(k, n) / C(M, n), falling as k does
        return _log_comb(k, n) - _log_comb(population, n)

    # the fewest queries at ``value`` that make n draws all landing there likely enough
    low, high = n, population
    while low < high:
        mid = (low + high) // 2
        if log_all_there(mid) >= math.log(alpha / 2.0):
            high = mid
        else:
            low = mid + 1
    at_value = low / population
    return lo + (value - lo) * at_value, hi - (hi - value) * at_value


def binary_bounds(
    hits: int, n: int, *, alpha: float = 0.05, population: int | None = None
) -> tuple[float, float]:
    """The exact interval of a mean of 0/1 labels (a hit rate): ``hits`` out of ``n``.

    The normal interval of such labels is too narrow near 0 or 1: 19 hits out of 20 cover a
    rate of 0.9 about 87 % of the time, and over rates from 0.5 to 0.99 the worst is 0.85-0.87
    at n = 20 to 60. This is Clopper-Pearson's interval, which covers at least 95 % at every
    rate. ``population``: the mean of these ``M`` queries themselves, the ``n`` drawn without
    replacement: every count ``K`` of hits among the ``M`` under which ``hits`` (or a count
    further out) has a hypergeometric chance of at least ``alpha / 2`` a side. At ``hits = n``
    both are :func:`constant_bounds`'."""
    import numpy as np
    from scipy.stats import beta, hypergeom

    z_value(alpha)  # checks alpha
    if not 0 <= hits <= n or n < 1:
        raise QueryValidationError(f"{hits} hits out of {n}.", field="y")
    tail = alpha / 2.0
    if population is None:
        low = float(beta.ppf(tail, hits, n - hits + 1)) if hits > 0 else 0.0
        high = float(beta.ppf(1.0 - tail, hits + 1, n - hits)) if hits < n else 1.0
        return low, high
    _fpc(n, population)  # checks the population holds the n labels
    counts = np.arange(hits, population - (n - hits) + 1)  # the K that could give ``hits``
    at_least = hypergeom.sf(hits - 1, population, counts, n)  # P(X >= hits), rising with K
    at_most = hypergeom.cdf(hits, population, counts, n)  # P(X <= hits), falling with K
    kept = counts[(at_least >= tail) & (at_most >= tail)]
    return float(kept.min()) / population, float(kept.max()) / population


def _log_comb(k: int, n: int) -> float:
    return math.lgamma(k + 1) - math.lgamma(n + 1) - math.lgamma(k - n + 1)


def tuned_lambda(y: Array, f: Array, f_unl: Array, w: Array, w_unl: Array) -> float:
    """PPI++'s variance-minimising weight of the predictions, clipped into [0, 1]
    (``ppi_py.ppi._calc_lam_glm`` for a one-dimensional mean)."""
    import numpy as np

    n, big_n = y.shape[0], f_unl.shape[0]
    theta = float((w_unl * f_unl).mean() + (w * (y - f)).mean())
    grads = w * (y - theta)
    grads_hat = w * (f - theta)
    cov = float(((grads - grads.mean()) * (grads_hat - grads_hat.mean())).mean())
    var_hat = float(np.var(np.concatenate([grads_hat, w_unl * (f_unl - theta)]), ddof=1))
    if var_hat <= 0.0:
        return 0.0  # constant predictions carry nothing
    return float(np.clip(cov / ((1.0 + n / big_n) * var_hat), 0.0, 1.0))


def ppi_mean(
    y: object,
    f: object,
    f_unlabeled: object,
    *,
    w: object | None = None,
    w_unlabeled: object | None = None,
    lam: float | None = None,
    alpha: float = 0.05,
    small_sample: bool = False,
    finite: bool = False,
) -> Interval:
    """PPI++ mean of ``y`` with predictions ``f`` (on the labelled queries) and ``f_unlabeled``
    (``ppi_py.ppi_mean_ci``). ``lam`` None tunes it; 1 is plain PPI; 0 the classical mean.
    Without unlabelled queries it is the classical mean. ``small_sample``: Student's t on
    n - 1 degrees of freedom (n labelled) instead of the normal quantile, with the sample
    variances (divided by n - 1 and N - 1) that t is made for; a ``lam`` tuned above 0 on
    these labels costs one more (n - 2), and fewer than :data:`MIN_TUNED` labels tune none
    (``lam`` 0). Without it, a tuned ``lam`` covered 0.91-0.93 at n = 4 to 15, pure noise as
    predictions included, where the labels' own t interval covers 0.94-0.95. ``finite``: the mean
    over these n + N queries themselves, by the difference estimator (module docstring)."""
    gold, pred, pred_unl = _array(y, "y"), _array(f, "f"), _array(f_unlabeled, "f_unlabeled")
    n, big_n = _labeled(gold), int(pred_unl.shape[0])
    if pred.shape[0] != n:
        raise QueryValidationError(f"{n} labels but {pred.shape[0]} predictions.", field="f")
    if finite:
        if w is not None or w_unlabeled is not None:
            raise QueryValidationError(
                "the finite-population estimate needs a uniform sample, not weights.", field="w"
            )
        return _difference(gold, pred, pred_unl, lam, alpha, small_sample)
    if big_n == 0:
        return classical_mean(gold, w=w, alpha=alpha, small_sample=small_sample)
    wl, wu = _weights(w, n, "w"), _weights(w_unlabeled, big_n, "w_unlabeled")
    size = None if w is None else effective_size(wl)
    tuned = lam is None
    if lam is None:
        # a weight tuned on three labels or fewer leaves t no degree of freedom to pay for it
        few = small_sample and (n if size is None else size) < MIN_TUNED
        lam = 0.0 if few else tuned_lambda(gold, pred, pred_unl, wl, wu)
    imputed, imputed_var = _weighted(wu, lam * pred_unl)
    rectifier, rectifier_var = _weighted(wl, gold - lam * pred)
    fitted = 0
    if small_sample:  # Student's t: the sample variances (ppi_py divides by the size)
        # a lam tuned on these labels minimised their residuals' spread: one degree of freedom
        # spent, as in the difference estimator (at n = 8, 0.92 coverage without it). At lam 0
        # the residuals are the labels themselves: the classical interval, nothing spent.
        fitted = 1 if tuned and lam > 0.0 else 0
        rectifier_var *= n / (n - 1 - fitted)
        imputed_var *= big_n / (big_n - 1) if big_n > 1 else 1.0
    se = math.sqrt(imputed_var / big_n + rectifier_var / n)
    return _interval(
        imputed + rectifier, se, alpha, n, big_n, float(lam), small_sample, fitted, size
    )


def _difference(
    y: Array, f: Array, f_unl: Array, lam: float | None, alpha: float, small_sample: bool
) -> Interval:
    """The difference estimator of the mean over all ``n + N`` queries (module docstring)."""
    import numpy as np

    n, big_n = y.shape[0], f_unl.shape[0]
    every = np.concatenate([f, f_unl])
    fitted = 0
    if lam is None and n < MIN_TUNED:  # no degree of freedom left to pay for a tuned lam
        lam = 0.0
    elif lam is None:
        spread = float(np.var(every))
        cov = float(np.mean((y - y.mean()) * (f - f.mean())))
        lam = float(np.clip(cov / spread, 0.0, 1.0)) if spread > 0.0 else 0.0
        fitted = 1
    resid = y - lam * f
    # lam tuned on these labels minimised their residuals' spread: one degree of freedom
    # spent, as the regression estimator's variance counts it (Cochran 1977, §7.3)
    var = float(np.sum((resid - resid.mean()) ** 2)) / (n - 1 - fitted)
    se = math.sqrt(_fpc(n, n + big_n) * var / n)
    estimate = lam * float(every.mean()) + float(resid.mean())
    return _interval(estimate, se, alpha, n, big_n, float(lam), small_sample, fitted)


def crossppi_mean(
    y: object,
    f_cross: object,
    f_unlabeled: object,
    *,
    lam: float | None = None,
    alpha: float = 0.05,
    small_sample: bool = False,
    finite: bool = False,
) -> Interval:
    """Cross-PPI (Zrnic and Candès 2024): ``f_cross[i]`` is labelled query i's prediction by
    the model fitted without i's fold; ``f_unlabeled`` is (N, K), one column per fold's model,
    averaged. ``lam`` 1 is ``ppi_py.crossppi_mean_ci``; None adds PPI++'s power tuning.
    ``finite``: the mean over these n + N queries (:func:`ppi_mean`)."""
    import numpy as np

    unl = np.asarray(f_unlabeled, dtype=np.float64)
    if unl.ndim != 2:
        raise QueryValidationError("f_unlabeled must be (N, K): one column per fold.")
    return ppi_mean(
        y, f_cross, unl.mean(axis=1), lam=lam, alpha=alpha, small_sample=small_sample,
        finite=finite,
    )  # fmt: skip


def regression_mean(
    y: object,
    f: object,
    f_unlabeled: object,
    *,
    alpha: float = 0.05,
    small_sample: bool = False,
    finite: bool = True,
) -> Interval:
    """The mean over these ``n + N`` queries with *several* predictions per query, ``f``
    (n, p) and ``f_unlabeled`` (N, p): the difference estimator with a vector ``lam`` (PPI++
    with control variates; the survey regression estimator, Cochran 1977, §7.9)::

        lam   = least squares of y on f over the labelled queries (with an intercept)
        theta = mean(y) - lam . (mean(f) - mean(f over all n + N))
        loo   = resid / (1 - h)          (each labelled query's leave-one-out residual)
        se**2 = (1 - n / M) * var(loo) / n                   (var: the sample variance)

    The ``p`` weights are fitted on the labelled queries, so Student's t takes n - 1 - p
    degrees of freedom, and the variance the leave-one-out residuals (the jackknife's): the
    plain residuals with ``p`` degrees of freedom taken off covered 0.92 at n = 30 with four
    predictions of a skewed metric (``tests/estimate/test_several.py``), these 0.95.
    Unbiased to O(1/n) whatever the predictions; worthless ones cost little more than the
    degrees of freedom. ``Interval.lam`` is the weights' sum. ``finite`` False: of the mean
    of the distribution the queries come from (``ppi_py``'s footing), where the unlabelled
    queries are a sample too: no correction, and ``var(f~ . lam) / N`` added."""
    import numpy as np

    gold = _array(y, "y")
    n = _labeled(gold)
    fl = np.asarray(f, dtype=np.float64)
    fu = np.asarray(f_unlabeled, dtype=np.float64)
    if fl.ndim != 2 or fu.ndim != 2 or fl.shape != (n, fu.shape[1]):
        raise QueryValidationError("predictions: expected (n, p) and (N, p) with n labels.")
    p = fl.shape[1]
    if n - 1 - p < 2:
        raise QueryValidationError(
            f"{n} labelled queries: {p} predictions need at least {p + 3}.", field="labels"
        )
    centre = np.vstack([fl, fu]).mean(axis=0)
    design = np.column_stack([np.ones(n), fl - centre])
    coef, *_ = np.linalg.lstsq(design, gold, rcond=None)
    hat = np.einsum("ij,jk,ik->i", design, np.linalg.pinv(design.T @ design), design)
    loo = (gold - design @ coef) / np.maximum(1.0 - hat, 1e-6)
    var = float(np.var(loo, ddof=1))
    if finite:
        se = math.sqrt(_fpc(n, n + fu.shape[0]) * var / n)
    else:
        imputed = float(np.var(fu @ coef[1:], ddof=1)) if fu.shape[0] > 1 else 0.0
        se = math.sqrt(var / n + imputed / max(fu.shape[0], 1))
    lam = float(coef[1:].sum())
    return _interval(float(coef[0]), se, alpha, n, fu.shape[0], lam, small_sample, p)
