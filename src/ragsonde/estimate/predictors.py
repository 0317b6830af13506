"""Predictors the estimate room ships: the score signals of each query's own ranking, and
each query's metrics under an LLM judge's labels.

The traffic room's label-free health is another
:class:`~ragsonde.models.prediction.Predictor` implementation; the estimate takes any of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ragsonde.models.prediction import PredictedQuery, QueryPrediction
from ragsonde.traffic.signals import score_signals

__all__ = ["JUDGE_METRICS", "JudgeMetrics", "ScoreSignals"]

#: The metrics a judge's labels predict, each a signal the estimate fits to the gold metric.
JUDGE_METRICS = ("ndcg@10", "recall@10", "precision@10", "mrr@10", "hit_rate@10")


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


class JudgeMetrics:
    """Each query's metrics (:data:`JUDGE_METRICS`) computed on its own ranking under an LLM
    judge's labels (grades from ``relevant_from`` up count, graded gain for nDCG): the
    prediction side of an estimate, never its gold. A query the judge never saw gets no signals
    (the estimate fills in their mean).

    For the estimate to stay unbiased the judge must have graded labelled and unlabelled queries
    alike: ``ragsonde judge --agreement`` grades the human-labelled hits too."""

    def __init__(
        self,
        labels: Mapping[str, Mapping[str, int]],
        ranking_of: Callable[[PredictedQuery], Sequence[str]],
        *,
        name: str = "judge",
        relevant_from: int = 2,
    ) -> None:
        self._labels = labels
        self._ranking_of = ranking_of
        self._name = name
        self._from = relevant_from

    @property
    def name(self) -> str:
        return self._name

    def predict(self, queries: Sequence[PredictedQuery]) -> list[QueryPrediction]:
        from ragsonde.evaluate.metrics import by_rank, compute_metrics

        seen = [q for q in queries if q.query_id in self._labels]
        qrels = {
            q.query_id: {d: g for d, g in self._labels[q.query_id].items() if g >= self._from}
            for q in seen
        }
        run = by_rank({q.query_id: dict.fromkeys(self._ranking_of(q), 0.0) for q in seen})
        _, per_query = compute_metrics(JUDGE_METRICS, qrels, run)
        return [
            QueryPrediction(query_id=q.query_id, source=self._name, signals=per_query[q.query_id])
            for q in seen
        ]
