"""Choosing the method and combining predictors: estimate_metric and estimate_difference on
synthetic queries whose true mean is known."""

from __future__ import annotations

import numpy as np
import pytest

from ragsonde.estimate import MetricEstimate, estimate_difference, estimate_metric
from ragsonde.models.estimate import Bounds
from ragsonde.models.prediction import QueryPrediction


def _world(seed: int, big: int = 600) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Queries whose metric is a noisy logistic function of a signal: truth mean 0.5."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=big)
    y = np.clip(1 / (1 + np.exp(-2 * x)) + rng.normal(0, 0.1, big), 0, 1)
    return [f"q{i}" for i in range(big)], x, y


def _preds(ids: list[str], x: np.ndarray) -> list[QueryPrediction]:
    return [
        QueryPrediction(query_id=q, source="signals", signals={"s": float(v), "s2": float(v**2)})
        for q, v in zip(ids, x, strict=True)
    ]


def test_signals_are_crossfitted_and_cover() -> None:
    hits, ratios = 0, []
    for rep in range(60):
        ids, x, y = _world(rep)
        truth = float(y.mean())
        gold = {ids[i]: float(y[i]) for i in range(50)}
        est = estimate_metric(gold, ids, _preds(ids, x), seed=rep)
        assert est.method == "cross-ppi++" and est.sources == ["signals"]
        assert (est.n_labeled, est.n_predicted) == (50, 550)
        hits += est.low <= truth <= est.high
        ratios.append((est.high - est.low) / (est.classical.high - est.classical.low))
    assert hits / 60 >= 0.9
    assert float(np.mean(ratios)) < 0.6  # a strong signal: far narrower than 50 labels alone


def test_without_predictions_the_classical_estimate_says_so() -> None:
    ids, _, y = _world(1, 100)
    gold = {ids[i]: float(y[i]) for i in range(30)}
    est = estimate_metric(gold, ids)
    assert est.method == "classical" and est.n_predicted == 0 and "no predictions" in est.note
    assert est.estimate == pytest.approx(float(y[:30].mean()))
    assert (est.low, est.high) == (est.classical.low, est.classical.high)


def test_few_labels_use_the_predictors_own_value() -> None:
    ids, _, y = _world(2, 100)
    preds = [
        QueryPrediction(query_id=q, source="judge", predicted=float(v))
        for q, v in zip(ids, np.clip(y + 0.05, 0, 1), strict=True)
    ]
    gold = {ids[i]: float(y[i]) for i in range(5)}
    est = estimate_metric(gold, ids, preds)
    assert est.method == "ppi++" and est.lam is not None and est.lam > 0.5


def test_paired_difference_sees_through_shared_difficulty() -> None:
    """Two systems whose per-query metrics share the query's difficulty: the difference's
    interval is computed on the per-query differences and covers the true gap."""
    rng = np.random.default_rng(7)
    covered = 0
    for rep in range(40):
        ids, x, y = _world(100 + rep, 400)
        gain = np.clip(0.05 + 0.1 * (x < 0) + rng.normal(0, 0.05, len(ids)), -1, 1)
        yb = np.clip(y + gain, 0, 1)
        ga = {ids[i]: float(y[i]) for i in range(60)}
        gb = {ids[i]: float(yb[i]) for i in range(60)}
        est = estimate_difference(ga, gb, ids, _preds(ids, x), _preds(ids, x), seed=rep)
        covered += est.low <= float((yb - y).mean()) <= est.high
    assert covered / 40 >= 0.9


@pytest.mark.parametrize(
    ("op", "threshold", "passed"),
    [(">=", 0.6, True), (">=", 0.65, False), ("<=", 0.7, True), ("<=", 0.68, False)],
)
def test_a_gate_on_an_estimate_needs_the_whole_interval(
    op: str, threshold: float, passed: bool
) -> None:
    est = MetricEstimate(
        estimate=0.65, low=0.62, high=0.69, n_labeled=50, n_predicted=250, method="ppi++",
        classical=Bounds(estimate=0.65, low=0.6, high=0.7),
    )  # fmt: skip
    assert est.passes(op, threshold) is passed


def test_the_options_name_exactly_the_registered_predictors() -> None:
    from ragsonde.estimate.run import PREDICTORS
    from ragsonde.models.estimate import PREDICTOR_NAMES

    assert set(PREDICTORS) == set(PREDICTOR_NAMES)


def test_an_interval_stays_inside_the_metrics_range() -> None:
    """A metric lives in [0, 1] and a difference in [-1, 1]: the interval is cut there (the part
    outside holds no possible value). Near-perfect labels put the uncut Student-t interval's top
    above 1."""
    ids = [f"q{i}" for i in range(40)]
    gold = {q: (0.5 if i == 0 else 1.0) for i, q in enumerate(ids[:30])}
    est = estimate_metric(gold, ids)
    half = 2.045 * np.std(list(gold.values()), ddof=1) / np.sqrt(30)  # t(29), uncut
    assert est.estimate + half > 1.0  # the uncut interval would leave the range
    assert est.high == 1.0 and est.classical.high == 1.0
    assert 0.0 <= est.low < est.estimate <= 1.0
    worse = {q: 0.0 for q in gold}
    diff = estimate_difference(gold, worse, ids)  # B - A, A near perfect, B zero
    assert diff.low == -1.0 and diff.estimate < 0


def test_a_ppi_estimate_outside_the_metrics_range_is_cut_into_it() -> None:
    """PPI++ adds the predictions' mean over every query to the labelled queries' residuals, so
    a predictor lower on the labelled queries than on the rest pushes the estimate past 1. It
    read nDCG 1.006 above its interval's top of 1; the truth lies in [0, 1], so the estimate cut
    into it is never further from it."""
    rng = np.random.default_rng(0)
    ids = [f"q{i}" for i in range(200)]
    f = np.r_[rng.uniform(0.0, 0.55, 30), rng.uniform(0.6, 1.0, 170)]
    gold = {ids[i]: float(np.clip(f[i] + 0.45 + rng.normal(0, 0.005), 0, 1)) for i in range(30)}
    preds = [
        QueryPrediction(query_id=q, source="s", predicted=float(v))
        for q, v in zip(ids, f, strict=True)
    ]
    for finite in (False, True):
        est = estimate_metric(gold, ids, preds, finite=finite)
        assert est.method == "ppi++" and est.lam is not None and est.lam > 0.3
        # the uncut estimate, by hand: lam * mean(f over the rest or all) + mean(y - lam f)
        y, fl = np.array(list(gold.values())), f[:30]
        rest = f if finite else f[30:]
        assert est.lam * rest.mean() + (y - est.lam * fl).mean() > 1.0
        assert est.estimate == 1.0 and 0.0 <= est.low <= est.estimate <= est.high <= 1.0
