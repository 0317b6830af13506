"""The library's estimate functions refuse what the CLI refuses, instead of a wrong number or a
bare Python error: a query listed twice (its label counted twice), a labelled query's chance of
0 (ZeroDivisionError), values outside a metric's range (clipped quietly)."""

from __future__ import annotations

import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.estimate import estimate_difference, estimate_metric
from ragsonde.models.prediction import QueryPrediction

IDS = [f"q{i}" for i in range(12)]
GOLD = {q: 0.5 + 0.04 * i for i, q in enumerate(IDS[:10])}


def test_a_query_listed_twice_is_refused() -> None:
    with pytest.raises(QueryValidationError, match="'q0' is listed twice"):
        estimate_metric(GOLD, IDS + ["q0"] * 20)
    with pytest.raises(QueryValidationError, match="listed twice"):
        estimate_difference(GOLD, GOLD, [*IDS, "q3"])


@pytest.mark.parametrize("p", [0.0, -0.5, 1.5])
def test_a_labelled_querys_chance_outside_0_1_is_refused(p: float) -> None:
    with pytest.raises(QueryValidationError, match=r"chance must be in \(0, 1\]"):
        estimate_metric(GOLD, IDS, probabilities={**dict.fromkeys(IDS, 0.5), "q1": p})


def test_values_outside_a_metrics_range_are_refused() -> None:
    with pytest.raises(QueryValidationError, match=r"lie in \[0, 1\]"):
        estimate_metric({**GOLD, "q2": 1.7}, IDS)


def test_missing_predictions_are_named_as_the_reason() -> None:
    """10 labels and a predicted value for 11 of 12 queries fell back to the labelled queries
    with the note "10 labelled queries: too few to fit the signals to (at least 8)"."""
    preds = [QueryPrediction(query_id=q, source="s", predicted=0.6) for q in IDS[:11]]
    e = estimate_metric(GOLD, IDS, preds)
    assert e.method == "classical" and "missing for some queries" in e.note


def test_a_label_for_a_query_not_estimated_over_is_refused() -> None:
    """Labels of queries missing from ``ids`` were dropped without a word: 12 labels given, an
    interval resting on 10 (and a difference's on the queries both sides share)."""
    extra = {**GOLD, "x1": 0.0, "x2": 0.0}
    with pytest.raises(QueryValidationError, match="'x1' is labelled but not among the 12 ids"):
        estimate_metric(extra, IDS)
    with pytest.raises(QueryValidationError, match="'x1' is labelled but not among"):
        estimate_difference(GOLD, extra, IDS)


def test_a_labelled_query_without_its_chance_is_refused() -> None:
    """Under a judging plan a labelled query the ``probabilities`` do not name was weighed as if
    its chance were 1 (the CLI refuses such a plan file)."""
    with pytest.raises(QueryValidationError, match="'q9' has no chance to be labelled"):
        estimate_metric(GOLD, IDS, probabilities=dict.fromkeys(IDS[:9], 0.5))
