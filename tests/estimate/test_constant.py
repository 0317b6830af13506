"""Every labelled value the same (20 hits out of 20): the normal intervals have no width, so the
estimate takes the exact bound of :func:`ragsonde.estimate.ppi.constant_bounds`. Checked against
scipy's Clopper-Pearson interval (an independent implementation), by exact enumeration of the
chance that the bound misses the truth, and by coverage over draws."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest, hypergeom

from ragsonde.estimate import estimate_difference, estimate_metric
from ragsonde.estimate.ppi import constant_bounds
from ragsonde.models.prediction import QueryPrediction

ALPHA = 0.05


@pytest.mark.parametrize("n", [2, 5, 20, 30, 100])
def test_at_an_end_of_the_span_it_is_clopper_pearson(n: int) -> None:
    every = binomtest(n, n).proportion_ci(confidence_level=1 - ALPHA, method="exact")
    none = binomtest(0, n).proportion_ci(confidence_level=1 - ALPHA, method="exact")
    assert constant_bounds(1.0, n, (0.0, 1.0)) == pytest.approx((every.low, 1.0), abs=1e-12)
    assert constant_bounds(0.0, n, (0.0, 1.0)) == pytest.approx((0.0, none.high), abs=1e-12)


@pytest.mark.parametrize("value", [0.0, 0.3, 1.0])
def test_no_mean_is_missed_more_often_than_alpha_over_two_a_side(value: float) -> None:
    """The worst distribution for a mean mu: a share s at ``value`` and the rest at the far end
    of the span; n draws all give ``value`` with chance s**n. Over a grid of mu, the chance that
    this happens and the bound leaves mu out is at most alpha / 2 on each side."""
    n = 20
    low, high = constant_bounds(value, n, (0.0, 1.0))
    for mu in np.linspace(0.0, 1.0, 2001):
        if mu > value:  # the rest at 1
            s = (1.0 - mu) / (1.0 - value)
            assert s**n * (high < mu) <= ALPHA / 2 + 1e-12, mu
        elif mu < value:  # the rest at 0
            s = mu / value
            assert s**n * (low > mu) <= ALPHA / 2 + 1e-12, mu


@pytest.mark.parametrize("n", [5, 20, 40])
def test_the_benchmarks_own_mean_by_enumeration_of_every_population(n: int) -> None:
    """M = 46 queries, K of them hits, n labelled without replacement: scipy's hypergeometric
    chance that all n are hits, where the bound excludes K / M, is at most alpha / 2."""
    big_m = 46
    low, high = constant_bounds(1.0, n, (0.0, 1.0), population=big_m)
    assert high == 1.0 and 0.0 < low < 1.0
    for k in range(n, big_m + 1):
        all_hits = hypergeom.pmf(n, big_m, k, n)
        assert all_hits * (low > k / big_m) <= ALPHA / 2 + 1e-12, k
    # the bound is tight: one more hit short of it would be refused
    k_low = round(low * big_m)
    assert hypergeom.pmf(n, big_m, k_low, n) >= ALPHA / 2 > hypergeom.pmf(n, big_m, k_low - 1, n)
    assert constant_bounds(1.0, big_m, (0.0, 1.0), population=big_m) == (1.0, 1.0)


def _ids(m: int) -> list[str]:
    return [f"q{i}" for i in range(m)]


def test_an_estimate_from_labels_that_are_all_hits_is_not_certain() -> None:
    ids = _ids(46)
    gold = dict.fromkeys(ids[:20], 1.0)
    preds = [
        QueryPrediction(query_id=q, source="scores", predicted=0.5 + 0.01 * i)
        for i, q in enumerate(ids)
    ]
    e = estimate_metric(gold, ids, preds)
    cp = binomtest(20, 20).proportion_ci(method="exact")
    assert (e.estimate, e.high) == (1.0, 1.0) and e.low == pytest.approx(cp.low)
    assert (e.classical.low, e.classical.high) == (e.low, e.high)
    assert e.method == "classical" and "every labelled value is 1" in e.note
    finite = estimate_metric(gold, ids, preds, finite=True)
    assert e.low < finite.low < 1.0  # 20 of these 46 queries: tighter, and still not certain
    labelled = estimate_metric(dict.fromkeys(ids, 1.0), ids, finite=True)
    assert (labelled.low, labelled.high) == (1.0, 1.0)  # every query labelled: known


def test_two_systems_that_agree_on_every_label_are_not_shown_equal() -> None:
    ids = _ids(30)
    same = dict.fromkeys(ids, 0.7)
    d = estimate_difference(same, same, ids)
    bound = 1.0 - (ALPHA / 2) ** (1 / 30)
    assert (d.low, d.estimate, d.high) == pytest.approx((-bound, 0.0, bound))


def test_coverage_of_a_high_hit_rate_from_twenty_labels() -> None:
    """A hit rate of 0.97 from 20 labels: 54 % of draws are 20 hits out of 20, where a zero-width
    interval at 1 misses the truth every time. With the bound the interval covers as promised."""
    rng = np.random.default_rng(7)
    ids = _ids(20)
    covered = 0
    draws = 600
    for _ in range(draws):
        hits = rng.random(20) < 0.97
        e = estimate_metric(dict(zip(ids, hits.astype(float), strict=True)), ids)
        covered += e.low <= 0.97 <= e.high
    assert covered / draws >= 0.95


def test_a_stratified_plan_with_no_spread_takes_each_stratums_exact_bound() -> None:
    """Under a comparison plan, labelled differences all 0 gave stratified PPI++ an interval of
    no width. Each stratum's bound at alpha / H, from scipy's hypergeometric (independent)."""
    from ragsonde.estimate.design import EXACT, stratified_difference

    sizes, labelled_in = [10, 6], [4, 3]
    strata = np.asarray([EXACT] * 4 + [0] * 10 + [1] * 6)
    labelled = np.zeros(len(strata), dtype=bool)
    labelled[4:8], labelled[14:17] = True, True
    d = np.where(labelled, 0.25, 9.0)  # unlabelled values are never read
    d[:4] = 0.0
    f = np.linspace(-0.2, 0.2, len(strata))
    iv = stratified_difference(d, labelled, strata, f)
    share = ALPHA / 2 / len(sizes)
    low = high = 0.0
    for size, n in zip(sizes, labelled_in, strict=True):
        k = next(k for k in range(n, size + 1) if hypergeom.pmf(n, size, k, n) >= share)
        low += size * (-1 + 1.25 * k / size)
        high += size * (1 - 0.75 * k / size)
    assert iv.estimate == pytest.approx(0.25 * 16 / 20)
    assert (iv.low, iv.high) == pytest.approx((low / 20, high / 20))
    assert iv.low < iv.estimate < iv.high


def test_a_weighted_plans_labels_all_hits_take_the_bound_at_its_effective_size() -> None:
    """Under a judging plan (``probabilities``), labels that were all hits still gave a normal
    interval of no width at 1: at a hit rate of 0.97, 46 % of the draws below said the rate was
    known to be 1, and the interval covered 0.54 of the time. The bound is Clopper-Pearson at
    Kish's effective sample size; those draws now all cover the truth."""
    from ragsonde.estimate.ppi import effective_size

    rng = np.random.default_rng(3)
    m = 200
    ids = _ids(m)
    pi = np.where(np.arange(m) < 100, 0.05, 0.2)
    probabilities = dict(zip(ids, pi.tolist(), strict=True))
    draws, constant, missed = 400, 0, 0
    for _ in range(draws):
        hits = (rng.random(m) < 0.97).astype(float)
        labelled = np.flatnonzero(rng.random(m) < pi)
        if hits[labelled].min() < 1.0:
            continue
        constant += 1
        e = estimate_metric({ids[i]: 1.0 for i in labelled}, ids, probabilities=probabilities)
        w = 1.0 / pi[labelled]
        size = effective_size(w)
        assert size == int(w.sum() ** 2 / (w**2).sum())  # Kish's, rounded down
        cp = binomtest(size, size).proportion_ci(confidence_level=1 - ALPHA, method="exact")
        assert (e.low, e.estimate, e.high) == pytest.approx((cp.low, 1.0, 1.0))
        assert "effective sample size" in e.note and size <= len(labelled)
        missed += not e.low <= 0.97 <= e.high
    assert constant > draws / 4 and missed == 0
    equal = np.full(12, 3.0)
    assert effective_size(equal) == 12
