"""The plan's sampler: exactly n queries, each drawn as often as its planned probability."""

from __future__ import annotations

import numpy as np

from ragsonde.estimate.plan import _capped, _systematic


def test_probabilities_sum_to_n_and_never_pass_one() -> None:
    raw = np.asarray([50.0, 1.0, 1.0, 2.0, 3.0, 1.0, 1.0, 1.0])
    pi = _capped(raw, 4)
    assert abs(pi.sum() - 4.0) < 1e-9
    assert pi.max() == 1.0 and pi[0] == 1.0
    # the rest stay proportional to their raw weights
    assert abs(pi[4] / pi[3] - 1.5) < 1e-9


def test_systematic_draws_match_their_probabilities() -> None:
    rng = np.random.default_rng(0)
    pi = _capped(rng.uniform(0.2, 3.0, 40), 10)
    counts = np.zeros(40)
    reps = 4000
    for _ in range(reps):
        drawn = _systematic(pi, rng)
        assert len(drawn) == 10 and len(set(drawn)) == 10
        counts[drawn] += 1
    # each query's frequency within 4 binomial standard errors of its probability
    se = np.sqrt(pi * (1 - pi) / reps) + 1e-9
    assert np.all(np.abs(counts / reps - pi) <= 4 * se + 1e-3)
