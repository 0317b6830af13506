"""The statistics of ragsonde.estimate: every number against ppi_py (the authors' package) on
the same inputs, and coverage and width against a known truth with synthetic predictors."""

from __future__ import annotations

import numpy as np
import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.estimate import classical_mean, crossfit, crossppi_mean, ppi_mean
from ragsonde.estimate.ppi import z_value

ppi_py = pytest.importorskip("ppi_py")
from ppi_py.baselines import classical_mean_ci  # noqa: E402


def _data(seed: int, n: int = 40, big_n: int = 400) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    y = rng.beta(2, 3, n)
    f = np.clip(y + rng.normal(0, 0.15, n) + 0.05, 0, 1)
    f_unl = np.clip(rng.beta(2, 3, big_n) + rng.normal(0, 0.15, big_n) + 0.05, 0, 1)
    return y, f, f_unl


@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.4])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ppi_mean_matches_ppi_py(lam: float | None, seed: int) -> None:
    y, f, f_unl = _data(seed)
    ours = ppi_mean(y, f, f_unl, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y, f, f_unl, alpha=0.05, lam=lam)
    point = ppi_py.ppi_mean_pointestimate(y, f, f_unl, lam=lam)
    assert ours.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-12)
    assert (ours.low, ours.high) == pytest.approx((float(low[0]), float(high[0])), abs=1e-12)


def test_equal_weights_match_ppi_py_and_unequal_ones_use_the_ratio_variance() -> None:
    y, f, f_unl = _data(3)
    rng = np.random.default_rng(9)
    same = np.full(len(y), 3.0)
    ours = ppi_mean(y, f, f_unl, w=same)
    low, high = ppi_py.ppi_mean_ci(y, f, f_unl, alpha=0.05, w=same)
    assert (ours.low, ours.high) == pytest.approx((float(low[0]), float(high[0])), abs=1e-12)
    c = classical_mean(y, w=same)
    assert (c.low, c.high) == pytest.approx(classical_mean_ci(y, w=same, alpha=0.05))
    # unequal weights: the same point as ppi_py, the variance written out by hand
    w = rng.uniform(0.5, 3, len(y))
    point = ppi_py.ppi_mean_pointestimate(y, f, f_unl, lam=0.7, w=w)
    ours = ppi_mean(y, f, f_unl, w=w, lam=0.7)
    assert ours.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-12)
    wn = w / w.mean()
    r = y - 0.7 * f
    var = np.mean(wn**2 * (r - np.mean(wn * r)) ** 2) / len(y) + np.var(0.7 * f_unl) / len(f_unl)
    assert ours.se == pytest.approx(float(np.sqrt(var)), rel=1e-12)


def test_unequal_probability_samples_are_covered() -> None:
    """Queries drawn with probability rising with their metric (the worst case for an
    unweighted mean): weighted by 1 / p, PPI++ and the classical mean cover the truth."""
    rng = np.random.default_rng(21)
    size = 3000
    y = rng.beta(2, 3, size)
    f = np.clip(y + rng.normal(0, 0.2, size), 0, 1)
    p = 0.01 + 0.05 * y / y.mean()
    hits = {"ppi": 0, "classical": 0, "unweighted": 0}
    for _ in range(400):
        lab = rng.uniform(size=size) < p
        w = 1 / p[lab]
        for name, iv in (
            ("ppi", ppi_mean(y[lab], f[lab], f, w=w)),
            ("classical", classical_mean(y[lab], w=w)),
            ("unweighted", classical_mean(y[lab])),
        ):
            hits[name] += iv.low <= y.mean() <= iv.high
    assert hits["ppi"] / 400 >= 0.93 and hits["classical"] / 400 >= 0.93
    assert hits["unweighted"] / 400 < 0.5  # the bias the weights remove


def test_crossppi_matches_ppi_py() -> None:
    rng = np.random.default_rng(4)
    y, f, _ = _data(4)
    f_unl = rng.uniform(0, 1, (300, 5))
    ours = crossppi_mean(y, f, f_unl, lam=1.0)
    low, high = ppi_py.crossppi_mean_ci(y, f, f_unl, alpha=0.05)
    assert (ours.low, ours.high) == pytest.approx((float(low[0]), float(high[0])), abs=1e-12)
    # power tuning never widens the interval beyond plain cross-PPI's by more than noise
    assert crossppi_mean(y, f, f_unl).width <= ours.width + 1e-9


def _coverage(
    predict: str, n: int = 50, big_n: int = 1000, reps: int = 400
) -> tuple[float, float, float]:
    """Coverage of the true mean (Beta(2, 2): 0.5) by PPI++ and its mean width over the classical
    interval's from the same labels, for a perfect predictor or pure noise."""
    rng = np.random.default_rng(12)
    hits, ratios, lams = 0, [], []
    for _ in range(reps):
        y_all = rng.beta(2, 2, n + big_n)
        f_all = y_all.copy() if predict == "perfect" else rng.beta(2, 2, n + big_n)
        iv = ppi_mean(y_all[:n], f_all[:n], f_all[n:])
        hits += iv.low <= 0.5 <= iv.high
        ratios.append(iv.width / classical_mean(y_all[:n]).width)
        lams.append(iv.lam)
    return hits / reps, float(np.mean(ratios)), float(np.mean(lams))


def test_perfect_predictor_covers_and_narrows() -> None:
    coverage, ratio, lam = _coverage("perfect")
    assert coverage >= 0.93
    assert lam > 0.9
    # the imputed term alone is left: sqrt(n / N) of the classical width
    assert ratio == pytest.approx(np.sqrt(50 / 1000), abs=0.03)


def test_pure_noise_falls_back_to_the_classical_width() -> None:
    coverage, ratio, lam = _coverage("noise")
    assert coverage >= 0.93
    assert lam < 0.1
    assert 0.97 <= ratio <= 1.02


def test_small_samples_take_students_t() -> None:
    y, f, f_unl = _data(5, n=12)
    normal, small = (
        ppi_mean(y, f, f_unl, lam=0.0),
        ppi_mean(y, f, f_unl, lam=0.0, small_sample=True),
    )
    # lam 0: the classical mean, so the interval is scipy's one-sample t interval exactly
    # (the sample sd, n - 1 degrees of freedom), where ppi_py's normal one takes z and sd / n
    from scipy import stats

    ci = stats.ttest_1samp(y, 0.0).confidence_interval(0.95)
    assert small.estimate == normal.estimate == pytest.approx(y.mean())
    assert (small.low, small.high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert normal.se == pytest.approx(y.std() / np.sqrt(len(y)))
    tuned, tuned_small = ppi_mean(y, f, f_unl), ppi_mean(y, f, f_unl, small_sample=True)
    assert tuned_small.width / tuned.width > 2.200985160082949 / 1.959963984540054


@pytest.mark.parametrize("n", [4, 5, 8, 15])
@pytest.mark.parametrize("predict", ["noise", "decent"])
def test_a_tuned_lam_covers_as_the_t_interval_does_with_few_labels(n: int, predict: str) -> None:
    """``lam`` tuned on the labels it then weighs made their residuals look tighter than they
    are: with pure noise or a decent predictor of a Beta(2, 2) metric (mean 0.5), the
    interval covered 0.91-0.93 at n = 4 to 15, where Student's t on the labels alone
    (``scipy.stats.ttest_1samp``) covers 0.94-0.95. One degree of freedom spent on ``lam`` brings
    it back; three labels or fewer tune nothing (``lam`` 0: the classical interval)."""
    from scipy import stats

    rng = np.random.default_rng(31 + n)
    reps, big_n = 4000, 200
    hits = {"ppi": 0, "t": 0}
    for _ in range(reps):
        y = rng.beta(2, 2, n + big_n)
        noise = rng.beta(2, 2, n + big_n)
        f = noise if predict == "noise" else np.clip(y + rng.normal(0, 0.15, n + big_n), 0, 1)
        iv = ppi_mean(y[:n], f[:n], f[n:], small_sample=True)
        ci = stats.ttest_1samp(y[:n], 0.5).confidence_interval(0.95)
        hits["ppi"] += iv.low <= 0.5 <= iv.high
        hits["t"] += ci.low <= 0.5 <= ci.high
    # 4000 draws: a standard error of 0.0035 at 0.95
    assert hits["t"] / reps >= 0.935
    assert hits["ppi"] / reps >= 0.935
    assert hits["ppi"] >= hits["t"] - 0.01 * reps
    few = ppi_mean(y[:3], f[:3], f[3:], small_sample=True)
    t3 = stats.ttest_1samp(y[:3], 0.5).confidence_interval(0.95)
    assert few.lam == 0.0 and (few.low, few.high) == pytest.approx((t3.low, t3.high))


def test_crossfit_never_sees_a_querys_own_label() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=(40, 3))
    y = rng.uniform(size=40)
    x_unl = rng.normal(size=(10, 3))
    fit = crossfit(x, y, x_unl, folds=4)
    # changing a label moves only the predictions of other folds, never its own
    y2 = y.copy()
    y2[0] = 1.0 - y[0]
    fit2 = crossfit(x, y2, x_unl, folds=4)
    assert fit.labeled[0] == fit2.labeled[0]
    assert not np.allclose(fit.labeled, fit2.labeled)
    assert fit.unlabeled.shape == (10, 4)


def test_bad_inputs_are_validation_errors() -> None:
    with pytest.raises(QueryValidationError, match="at least 2"):
        classical_mean([0.5])
    with pytest.raises(QueryValidationError):
        ppi_mean([0.1, 0.2], [0.1], [0.3])
    with pytest.raises(QueryValidationError):
        z_value(1.5)
    with pytest.raises(QueryValidationError, match="finite"):
        classical_mean([0.1, float("nan")])
