"""The paired difference of two systems under a stratified judging design (active inference:
Zrnic and Candès 2024, "Active Statistical Inference"; the estimator is survey sampling's).

**Exact queries.** A query whose two rankings are identical to the depth a metric reads (the
same documents in the same order in both top ``k``) has a difference of exactly 0 under *any*
labels: nDCG@k, recall@k, MRR@k, hit@k and P@k of both systems read the same list against the
same judgements. Its prediction ``f = 0`` is exact and its residual ``d - f`` is 0 whatever its
label, so it needs none: an inclusion probability of 0 is valid there, because the term it
would add to the estimate is deterministically 0 (:func:`rank_spread` is 0 exactly there).

**The other queries** are split into strata (by :func:`rank_spread`, a label-free proxy of
``|d|``) and each stratum ``h`` of ``N_h`` queries gets ``n_h`` labels drawn uniformly without
replacement, so every query of it has ``pi = n_h / N_h``. The estimate of the mean difference
over all ``N`` queries is the inverse-probability-weighted PPI (Horvitz-Thompson difference
estimator; Särndal, Swensson and Wretman 1992, §6.3 and §3.7)::

    theta = (1/N) * (lam * sum(f over all) + sum over labelled of (d - lam f) / pi)
          = (1/N) * (lam * sum(f over all) + sum_h N_h * mean_h(d - lam f))
    se**2 = (1/N**2) * sum_h N_h**2 (1 - n_h / N_h) s_h**2 / n_h

``s_h``: the residuals' sample spread within stratum ``h``. ``lam`` (0: no predictor, the
stratified mean) is the combined regression coefficient (Cochran 1977, §7.8), tuned on the
labels and clipped into [0, 1], which costs a degree of freedom (the variance is scaled by ``df
/ (df - 1)``, as the regression estimator's divides by ``n - 2``, Cochran §7.3, and t takes one
less). Student's t takes the Satterthwaite degrees of freedom ``df`` of the stratum variances:
a stratum with 3 labels that carries most of the variance leaves about 2, whatever ``n``, and
``n - H`` instead covered 0.91 on a synthetic population (``tests/estimate/test_design.py``).
One stratum and no exact queries is the uniform case: :func:`ragsonde.estimate.ppi.ppi_mean`
with ``finite=True``, and, with ``lam = 1``, the point estimate of ``ppi_py.ppi_mean_ci`` given
``f`` over all queries as its unlabelled side. Labels already there when a plan was made (a
uniform sample) fall in each stratum as a uniform sample of it, so the estimate counts each
stratum's labels when it is made (``pi`` is post-stratified: ``n_h`` labelled of ``N_h``) and
stays valid given those counts.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ragsonde.errors import QueryValidationError
from ragsonde.estimate.ppi import Interval, constant_bounds, z_value

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np
    from numpy.typing import NDArray

__all__ = ["EXACT", "rank_spread", "stratified_difference"]

#: The stratum of the queries whose two rankings are identical to the metric's depth.
EXACT = -1


def _discounts(ranked: Sequence[str], depth: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for r, doc in enumerate(ranked[:depth]):
        out.setdefault(doc, 1.0 / math.log2(r + 2))
    return out


def rank_spread(a: Sequence[str], b: Sequence[str], depth: int = 10) -> float:
    """A label-free guess of ``|d|`` for one query: the root mean square of how far each
    document's DCG discount moves between the two top ``depth`` lists, each document weighted
    by its discount in either (a document ranked high is more likely the relevant one). With
    one relevant document, ``d`` of nDCG is exactly its discount's move. 0 exactly when the
    two top ``depth`` lists are identical (an exact query)."""
    da, db = _discounts(a, depth), _discounts(b, depth)
    union = set(da) | set(db)
    weight = {x: da.get(x, 0.0) + db.get(x, 0.0) for x in union}
    total = sum(weight.values())
    if total == 0.0:
        return 0.0
    moved = sum(weight[x] * (db.get(x, 0.0) - da.get(x, 0.0)) ** 2 for x in union)
    return math.sqrt(moved / total)


def _lambda(parts: list[tuple[float, NDArray[np.float64], NDArray[np.float64]]]) -> float:
    """The combined regression coefficient: sum_h a_h cov_h(d, f) / sum_h a_h var_h(f), with
    ``a_h = N_h**2 (1 - n_h/N_h) / n_h`` (each stratum's share of the variance)."""
    import numpy as np

    num = den = 0.0
    for a, d, f in parts:
        if len(d) < 2:
            continue
        num += a * float(np.cov(d, f, ddof=1)[0, 1])
        den += a * float(np.var(f, ddof=1))
    return float(np.clip(num / den, 0.0, 1.0)) if den > 0.0 else 0.0


def _satterthwaite(terms: list[tuple[float, int]]) -> float:
    """The degrees of freedom of a sum of stratum variances (Satterthwaite 1946; Cochran
    1977, §5.4): ``(sum v_h)**2 / sum(v_h**2 / (n_h - 1))``. A stratum with few labels that
    carries most of the variance leaves few, whatever the total ``n``."""
    total = sum(v for v, _ in terms)
    spread = sum(v * v / df for v, df in terms)
    return total * total / spread if spread > 0.0 else float(sum(df for _, df in terms) or 1)


def stratified_difference(
    d: NDArray[np.float64],
    labelled: NDArray[np.bool_],
    strata: NDArray[np.int64],
    f: NDArray[np.float64] | None = None,
    *,
    lam: float | None = None,
    alpha: float = 0.05,
) -> Interval:
    """The mean of ``d`` over all queries from its labelled entries (``d`` elsewhere is
    ignored), under the stratified design of the module docstring. ``strata``: each query's
    stratum (:data:`EXACT` for an exact query, whose ``d`` is 0 and needs no label); ``f``: a
    label-free prediction of ``d`` (None: the stratified mean); ``lam`` None tunes it."""
    import numpy as np

    big_n = len(d)
    if not len(labelled) == len(strata) == big_n or (f is not None and len(f) != big_n):
        raise QueryValidationError("design: d, labelled, strata and f differ in length.")
    pred = np.zeros(big_n) if f is None else np.where(strata == EXACT, 0.0, f)
    parts = []
    for h in sorted(set(strata.tolist()) - {EXACT}):
        inside = strata == h
        got = inside & labelled
        n_h, size = int(got.sum()), int(inside.sum())
        if n_h < min(2, size):
            raise QueryValidationError(
                f"design: stratum {h} has {n_h} labelled of its {size} queries; an interval "
                "needs 2 in each (judge the plan's queries).",
                field="plan",
            )
        parts.append((size, n_h, d[got], pred[got]))
    if not parts:  # every query exact: the difference is 0, known
        return Interval(0.0, 0.0, 0.0, 0.0, int(labelled.sum()), big_n, 0.0)
    share = [s * s * (1 - n / s) / n for s, n, _, _ in parts]
    fitted = 0
    if f is None:
        lam = 0.0
    elif lam is None:
        lam = _lambda([(a, y, x) for a, (_, _, y, x) in zip(share, parts, strict=True)])
        fitted = 1
    total = lam * float(pred.sum())
    terms: list[tuple[float, int]] = []  # each stratum's variance term and its n_h - 1
    for a, (size, n_h, y, x) in zip(share, parts, strict=True):
        resid = y - lam * x
        total += size * float(resid.mean())
        if n_h > 1:
            terms.append((a * float(np.var(resid, ddof=1)), n_h - 1))
    var = sum(v for v, _ in terms)
    judged = int(labelled.sum())
    if var == 0.0 and all(float(np.ptp(y)) == 0.0 for _, _, y, _ in parts):
        return _constant_strata(parts, alpha, big_n, judged)
    df = _satterthwaite(terms)
    if fitted and df > 2.0:  # lam tuned on these residuals: one of their df spent (§7.3)
        var *= df / (df - 1.0)
    df -= fitted
    estimate, se = total / big_n, math.sqrt(var) / big_n
    from scipy.stats import t as student

    z_value(alpha)  # checks alpha
    half = float(student.ppf(1.0 - alpha / 2.0, max(df, 1.0))) * se
    return Interval(
        estimate, se, estimate - half, estimate + half, judged, big_n - judged, float(lam)
    )


def _constant_strata(
    parts: list[tuple[int, int, NDArray[np.float64], NDArray[np.float64]]],
    alpha: float,
    big_n: int,
    judged: int,
) -> Interval:
    """Every stratum's labelled differences the same (each ``c_h``): no spread, so the interval
    above would have no width. Each stratum gets the exact bound of a constant sample of its
    ``N_h`` queries (:func:`~ragsonde.estimate.ppi.constant_bounds`) at ``alpha / H``, so that
    all ``H`` hold together (Bonferroni), and the mean over all queries lies between their
    ``N_h``-weighted sums (the exact queries add 0)."""
    bounds = [
        constant_bounds(float(y[0]), n, (-1.0, 1.0), alpha=alpha / len(parts), population=size)
        for size, n, y, _ in parts
    ]
    estimate = sum(size * float(y[0]) for size, _, y, _ in parts) / big_n
    low = sum(size * b[0] for (size, _, _, _), b in zip(parts, bounds, strict=True)) / big_n
    high = sum(size * b[1] for (size, _, _, _), b in zip(parts, bounds, strict=True)) / big_n
    return Interval(estimate, 0.0, low, high, judged, big_n - judged, 0.0)
