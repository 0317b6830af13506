"""0/1 labels (a hit rate) take the exact interval, not the normal one.

The normal interval of 0/1 labels is too narrow near 0 or 1: computed here by exact enumeration
(every count of hits, weighed by its binomial chance), its coverage falls to about 0.85 at some
rates. Clopper-Pearson's covers at least 95 % at every rate. Checked against scipy's own
``binomtest(...).proportion_ci(method="exact")`` (an independent implementation) and, for the
benchmark's own mean, by enumerating every population of 46 queries.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom, binomtest, hypergeom

from ragsonde.estimate import estimate_metric
from ragsonde.estimate.ppi import binary_bounds, classical_mean, constant_bounds
from ragsonde.models.prediction import QueryPrediction

ALPHA = 0.05
RATES = np.linspace(0.5, 0.99, 50)


def _coverage(bounds, n: int, rate: float) -> float:
    chance = binom.pmf(np.arange(n + 1), n, rate)
    return sum(c for k, c in enumerate(chance) if bounds(k, n)[0] <= rate <= bounds(k, n)[1])


def _normal(hits: int, n: int) -> tuple[float, float]:
    y = np.asarray([1.0] * hits + [0.0] * (n - hits))
    if hits in (0, n):  # no spread: the exact bound, as the estimate takes it
        return constant_bounds(float(hits == n), n, (0.0, 1.0))
    iv = classical_mean(y, alpha=ALPHA, small_sample=True)
    return iv.low, iv.high


@pytest.mark.parametrize(("hits", "n"), [(19, 20), (1, 20), (10, 20), (27, 30), (0, 7), (7, 7)])
def test_it_is_scipys_clopper_pearson(hits: int, n: int) -> None:
    ci = binomtest(hits, n).proportion_ci(confidence_level=1 - ALPHA, method="exact")
    assert binary_bounds(hits, n) == pytest.approx((ci.low, ci.high), abs=1e-9)


@pytest.mark.parametrize("n", [20, 30, 60])
def test_it_covers_every_rate_where_the_normal_interval_does_not(n: int) -> None:
    exact = [_coverage(binary_bounds, n, r) for r in RATES]
    normal = [_coverage(_normal, n, r) for r in RATES]
    assert min(exact) >= 1 - ALPHA
    assert min(normal) < 0.9  # what 0/1 labels got before


@pytest.mark.parametrize("n", [5, 20, 40])
def test_the_benchmarks_own_mean_by_enumeration_of_every_population(n: int) -> None:
    big_m = 46
    for k_pop in range(big_m + 1):
        chance = hypergeom.pmf(np.arange(n + 1), big_m, k_pop, n)
        covered = 0.0
        for hits, c in enumerate(chance):
            if c > 0:
                low, high = binary_bounds(hits, n, population=big_m)
                covered += c * (low - 1e-12 <= k_pop / big_m <= high + 1e-12)
        assert covered >= 1 - ALPHA, k_pop
    for value in (0.0, 1.0):  # at the ends: the constant-sample bound
        hits = round(value * n)
        assert binary_bounds(hits, n, population=big_m) == pytest.approx(
            constant_bounds(value, n, (0.0, 1.0), population=big_m)
        )


def test_the_estimate_of_a_hit_rate_takes_it_with_and_without_predictions() -> None:
    ids = [f"q{i}" for i in range(60)]
    gold = {q: float(i != 3) for i, q in enumerate(ids[:20])}  # 19 hits out of 20
    cp = binomtest(19, 20).proportion_ci(confidence_level=1 - ALPHA, method="exact")
    alone = estimate_metric(gold, ids)
    assert alone.method == "classical" and "Clopper-Pearson" in alone.note
    assert (alone.estimate, alone.low, alone.high) == pytest.approx((0.95, cp.low, cp.high))
    flat = [QueryPrediction(query_id=q, source="s", predicted=0.9) for q in ids]
    ignored = estimate_metric(gold, ids, flat)
    # predictions that get no weight (lam 0) leave the labelled queries alone, and say so: the
    # interval was the normal one, called ppi++, and passed a gate the exact one fails
    assert ignored.method == "ppi++" and "no weight (lam 0)" in ignored.note
    assert (ignored.low, ignored.high) == pytest.approx((cp.low, cp.high))
    rng = np.random.default_rng(1)
    informative = [
        QueryPrediction(
            query_id=q, source="s", predicted=float(np.clip(gold.get(q, 0.9) * 0.6 + 0.3
                                                            + rng.normal(0, 0.05), 0, 1))
        )
        for q in ids
    ]  # fmt: skip
    with_preds = estimate_metric(gold, ids, informative)
    # beside PPI++ (a normal interval), the classical one stays normal: like with like
    normal = classical_mean(np.asarray(list(gold.values())), alpha=ALPHA, small_sample=True)
    assert with_preds.method != "classical" and "Clopper-Pearson" not in with_preds.note
    assert (with_preds.classical.low, with_preds.classical.high) == pytest.approx(
        (normal.low, min(1.0, normal.high))
    )
    graded = estimate_metric({q: 0.5 + 0.5 * (i != 3) for i, q in enumerate(ids[:20])}, ids)
    assert "Clopper-Pearson" not in graded.note  # a graded metric keeps the normal interval
