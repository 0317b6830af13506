"""Predictors the estimate room ships: the score signals of each query's own ranking.

The traffic room's label-free health and an LLM judge's labels are other
:class:`~ragsonde.models.prediction.Predictor` implementations; the estimate takes any of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragsonde.models.prediction import PredictedQuery, QueryPrediction
from ragsonde.traffic.signals import score_signals

__all__ = ["ScoreSignals"]


class ScoreSignals:
    """The score signals (:func:`ragsonde.traffic.signals.score_signals`: top-1, gap, NQC,
    z-score) of the ranking ``scores_of(query)`` returns, best first. It has no ``predicted``
    value of its own: the estimate fits the signals to the labelled queries."""

    def __init__(
        self,
        scores_of: Callable[[PredictedQuery], Sequence[float]],
        *,
        name: str = "signals",
        k: int = 10,
    ) -> None:
        self._scores_of = scores_of
        self._name = name
        self._k = k

    @property
    def name(self) -> str:
        return self._name

    def predict(self, queries: Sequence[PredictedQuery]) -> list[QueryPrediction]:
        return [
            QueryPrediction(
                query_id=q.query_id,
                source=self._name,
                signals=score_signals(self._scores_of(q), self._k),
            )
            for q in queries
        ]
