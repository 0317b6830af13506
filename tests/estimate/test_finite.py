"""The benchmark's own mean (``finite=True``): the difference estimator with the
finite-population correction, checked against a known truth. The population is a fixed,
finite set of queries whose metric and prediction are known; each draw labels a uniform
sample of it, so the estimate's true variance over draws is the survey formula, computed here
from the whole population, independently of the code under test."""

from __future__ import annotations

import numpy as np
import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.estimate import classical_mean, estimate_metric, ppi_mean
from ragsonde.models.prediction import QueryPrediction

M = 300


def _population(seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """A skewed metric shaped like SciFact's nDCG@10 (a fifth at 0, half at 1, the rest
    between) and a prediction that knows part of it (correlation about 0.6)."""
    rng = np.random.default_rng(seed)
    kind = rng.choice(3, M, p=[0.2, 0.5, 0.3])
    y = np.where(kind == 0, 0.0, np.where(kind == 1, 1.0, rng.uniform(0.2, 0.9, M)))
    f = np.clip(0.5 * y + 0.25 + rng.normal(0, 0.2, M), 0, 1)
    return y, f


def _draws(n: int, reps: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.asarray([rng.permutation(M) < n for _ in range(reps)])


@pytest.mark.parametrize("n", [30, 100])
def test_fixed_lambda_variance_is_the_survey_formula(n: int) -> None:
    y, f = _population()
    lam = 0.7
    e = y - lam * f
    true_var = (1 - n / M) * e.var(ddof=1) / n  # over every possible sample of n
    est, se2 = [], []
    for lab in _draws(n, 6000, n):
        iv = ppi_mean(y[lab], f[lab], f[~lab], lam=lam, finite=True)
        est.append(iv.estimate)
        se2.append(iv.se**2)
    assert np.mean(est) == pytest.approx(y.mean(), abs=3 * np.sqrt(true_var / 6000))
    assert np.var(est) == pytest.approx(true_var, rel=0.06)
    assert np.mean(se2) == pytest.approx(true_var, rel=0.03)  # s**2 is unbiased for S**2


@pytest.mark.parametrize("n", [30, 50, 100])
def test_tuned_intervals_cover_a_skewed_population(n: int) -> None:
    """Power tuning on the same labels, Student's t, a metric with mass at 0 and 1: the
    interval keeps its coverage of the population's own mean at n = 30, and the classical
    one with the same correction does too."""
    y, f = _population()
    truth = float(y.mean())
    hits = {"ppi": 0, "classical": 0}
    ratio = []
    reps = 5000
    for lab in _draws(n, reps, 100 + n):
        iv = ppi_mean(y[lab], f[lab], f[~lab], finite=True, small_sample=True)
        c = classical_mean(y[lab], population=M, small_sample=True)
        hits["ppi"] += iv.low <= truth <= iv.high
        hits["classical"] += c.low <= truth <= c.high
        ratio.append(iv.width / c.width)
    # 5000 draws: a standard error of 0.003 at 0.95. The skew alone costs the classical
    # interval about half a point at n = 30; a tuned lam (one degree of freedom) no more
    assert hits["ppi"] / reps >= 0.935 and hits["classical"] / reps >= 0.935
    assert hits["ppi"] >= hits["classical"] - 0.006 * reps
    # the width ratio is sqrt(1 - rho**2) whatever n (no n / N term)
    rho = np.corrcoef(y, f)[0, 1]
    assert float(np.mean(ratio)) == pytest.approx(np.sqrt(1 - rho**2), abs=0.03)


def test_pure_noise_falls_back_to_the_classical_width() -> None:
    y, _ = _population()
    noise = np.random.default_rng(8).uniform(size=M)
    ratios, lams = [], []
    for lab in _draws(50, 500, 9):
        iv = ppi_mean(y[lab], noise[lab], noise[~lab], finite=True)
        ratios.append(iv.width / classical_mean(y[lab], population=M).width)
        lams.append(iv.lam)
    assert float(np.mean(lams)) < 0.15
    assert 0.97 <= float(np.mean(ratios)) <= 1.03


def test_a_perfect_predictor_leaves_nothing_to_estimate() -> None:
    y, _ = _population()
    lab = _draws(30, 1, 1)[0]
    iv = ppi_mean(y[lab], y[lab], y[~lab], finite=True)
    assert iv.lam == pytest.approx(1.0)
    assert iv.estimate == pytest.approx(y.mean(), abs=1e-12) and iv.width == pytest.approx(0)


def test_the_classical_correction_by_hand() -> None:
    y, _ = _population()
    sample = y[:40]
    c = classical_mean(sample, population=M)
    by_hand = np.sqrt((1 - 40 / M) * sample.var(ddof=1) / 40)
    assert c.se == pytest.approx(by_hand, rel=1e-12)
    every = classical_mean(y, population=M)  # every query labelled: the mean is known
    assert every.width == 0.0 and every.estimate == pytest.approx(y.mean())


def test_weights_and_a_small_population_are_refused() -> None:
    y, f = _population()
    with pytest.raises(QueryValidationError, match="uniform sample"):
        ppi_mean(y[:30], f[:30], f[30:], w=np.ones(30), finite=True)
    with pytest.raises(QueryValidationError, match="uniform sample"):
        classical_mean(y[:30], w=np.ones(30), population=M)
    with pytest.raises(QueryValidationError, match="fewer than"):
        classical_mean(y[:30], population=20)


def test_estimate_metric_of_the_benchmark_says_so() -> None:
    y, f = _population()
    ids = [f"q{i}" for i in range(M)]
    preds = [
        QueryPrediction(query_id=q, source="judge", predicted=float(v))
        for q, v in zip(ids, f, strict=True)
    ]
    gold = {ids[i]: float(y[i]) for i in range(0, M, 6)}
    finite = estimate_metric(gold, ids, preds, finite=True)
    sample = estimate_metric(gold, ids, preds)
    assert finite.method == sample.method == "ppi++"
    assert "finite population" in finite.note and "finite" not in sample.note
    assert finite.high - finite.low < sample.high - sample.low
    assert (
        finite.classical.high - finite.classical.low < sample.classical.high - sample.classical.low
    )
