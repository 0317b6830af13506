"""Several fixed predictions at once (:func:`ragsonde.estimate.ppi.regression_mean`, PPI++ with
a vector ``lam``): the estimate and its leave-one-out residuals checked against statsmodels'
least squares, the interval's coverage and width on a finite population of known mean, and
the fallback when the predictions are noise."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.estimate import classical_mean, ppi_mean
from ragsonde.estimate.ppi import regression_mean

sm = pytest.importorskip("statsmodels.api")

M = 300


def _population(seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """A skewed metric shaped like SciFact's nDCG@10 (a fifth at 0, half at 1, the rest
    between) and four correlated predictions of it, each knowing part of it."""
    rng = np.random.default_rng(seed)
    kind = rng.choice(3, M, p=[0.2, 0.5, 0.3])
    y = np.where(kind == 0, 0.0, np.where(kind == 1, 1.0, rng.uniform(0.2, 0.9, M)))
    base = 0.5 * y + rng.normal(0, 0.2, M)
    f = np.clip(np.column_stack([base + rng.normal(0, 0.15, M) for _ in range(4)]), 0, 1)
    return y, f


def _draws(n: int, reps: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.asarray([rng.permutation(M) < n for _ in range(reps)])


def test_matches_least_squares_by_statsmodels() -> None:
    y, f = _population()
    lab = _draws(40, 1, 5)[0]
    iv = regression_mean(y[lab], f[lab], f[~lab], small_sample=True)
    # independently: OLS on the predictions centred at their mean over all M queries; the
    # intercept is the regression estimator, the PRESS residuals its leave-one-out residuals
    x = sm.add_constant(f[lab] - f.mean(axis=0))
    ols = sm.OLS(y[lab], x).fit()
    assert iv.estimate == pytest.approx(ols.params[0], abs=1e-12)
    press = ols.get_influence().resid_press
    se = math.sqrt((1 - 40 / M) * np.var(press, ddof=1) / 40)
    assert iv.se == pytest.approx(se, rel=1e-9)
    from scipy.stats import t

    assert iv.high - iv.estimate == pytest.approx(t.ppf(0.975, 40 - 1 - 4) * se, rel=1e-9)
    assert iv.lam == pytest.approx(float(ols.params[1:].sum()), abs=1e-12)


def test_one_prediction_is_the_difference_estimator() -> None:
    y, f = _population()
    lab = _draws(50, 1, 6)[0]
    one = regression_mean(y[lab], f[lab, :1], f[~lab, :1])
    slope = float(np.polyfit(f[lab, 0], y[lab], 1)[0])
    fixed = ppi_mean(y[lab], f[lab, 0], f[~lab, 0], lam=slope, finite=True)
    assert one.estimate == pytest.approx(fixed.estimate, abs=1e-12)


@pytest.mark.parametrize("n", [30, 50, 100])
def test_covers_a_skewed_population_and_narrows(n: int) -> None:
    y, f = _population()
    truth = float(y.mean())
    reps = 3000
    hits, ratio = 0, []
    for lab in _draws(n, reps, 200 + n):
        iv = regression_mean(y[lab], f[lab], f[~lab], small_sample=True)
        hits += iv.low <= truth <= iv.high
        ratio.append(iv.width / classical_mean(y[lab], population=M, small_sample=True).width)
    # 3000 draws: a standard error of 0.004 at 0.95
    assert hits / reps >= 0.935
    # the best linear combination's correlation, computed on the whole population
    full = np.column_stack([np.ones(M), f])
    fit = full @ np.linalg.lstsq(full, y, rcond=None)[0]
    rho = float(np.corrcoef(y, fit)[0, 1])
    assert float(np.mean(ratio)) < 1.0
    # four weights fitted on n labels cost about sqrt(1 + p / n) over the ideal sqrt(1 - rho**2)
    assert float(np.mean(ratio)) == pytest.approx(
        math.sqrt(1 - rho**2) * math.sqrt(1 + 4 / n), rel=0.08
    )


def test_noise_costs_little_more_than_the_classical_width() -> None:
    y, _ = _population()
    noise = np.random.default_rng(8).uniform(size=(M, 3))
    truth, reps = float(y.mean()), 1000
    hits, ratio = 0, []
    for lab in _draws(50, reps, 9):
        iv = regression_mean(y[lab], noise[lab], noise[~lab], small_sample=True)
        hits += iv.low <= truth <= iv.high
        ratio.append(iv.width / classical_mean(y[lab], population=M, small_sample=True).width)
    assert hits / reps >= 0.93
    assert 1.0 <= float(np.mean(ratio)) <= 1.1


def test_bad_inputs_are_validation_errors() -> None:
    y, f = _population()
    with pytest.raises(QueryValidationError, match="at least 7"):
        regression_mean(y[:6], f[:6], f[6:])
    with pytest.raises(QueryValidationError, match=r"\(n, p\)"):
        regression_mean(y[:30], f[:30, 0], f[30:, 0])
    with pytest.raises(QueryValidationError, match=r"\(n, p\)"):
        regression_mean(y[:30], f[:30], f[30:, :2])


def test_the_distribution_form_covers_the_distributions_mean() -> None:
    """``finite=False``: each draw is a fresh sample of 300 queries from a distribution whose
    mean is known (0.2 · 0 + 0.5 · 1 + 0.3 · 0.55), 30 of them labelled."""
    truth, reps, n = 0.665, 2000, 30
    hits, wider = 0, 0
    for seed in range(reps):
        y, f = _population(1000 + seed)
        lab = np.arange(M) < n
        iv = regression_mean(y[lab], f[lab], f[~lab], small_sample=True, finite=False)
        hits += iv.low <= truth <= iv.high
        wider += iv.width > regression_mean(y[lab], f[lab], f[~lab], small_sample=True).width
    assert hits / reps >= 0.935  # a standard error of 0.005 at 0.95
    assert wider == reps  # the unlabelled queries' sampling adds to the finite form's variance
