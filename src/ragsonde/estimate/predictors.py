"""Predictors the estimate room ships: the score signals of each query's own ranking, each
query's metrics under an LLM judge's labels, and a fixed, label-free consensus of the rankings a
deployment can run beside it.

The traffic room's label-free health is another
:class:`~ragsonde.models.prediction.Predictor` implementation; the estimate takes any of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from ragsonde.models.prediction import PredictedQuery, QueryPrediction
from ragsonde.traffic.signals import score_signals

if TYPE_CHECKING:
    from ragsonde.models.params import SearchParams
    from ragsonde.workspace import Workspace

__all__ = [
    "CONSENSUS_SIGNALS",
    "JUDGE_METRICS",
    "Consensus",
    "JudgeMetrics",
    "ScoreSignals",
    "consensus_values",
    "pseudo_ndcg",
    "rank_average",
]

#: The signals :class:`Consensus` averages (as percentile ranks): the served ranking's nDCG@10
#: against pseudo-labels voted by the dense, BM25 and served rankings (reference-list QPP), the
#: traffic room's fixed ``predicted``, the dense/BM25 agreement (RBO) and the served ranking's
#: top-1 − top-10 score gap.
CONSENSUS_SIGNALS = ("pseudo_ndcg", "predicted", "rbo", "gap")

#: How deep each reference ranking votes, and the nDCG cut-off.
VOTE_DEPTH, NDCG_AT = 3, 10

#: The metrics a judge's labels predict, each a signal the estimate fits to the gold metric.
JUDGE_METRICS = ("ndcg@10", "recall@10", "precision@10", "mrr@10", "hit_rate@10")


class ScoreSignals:
    """The score signals (:func:`ragsonde.traffic.signals.score_signals`: top-1, gap, NQC,
    z-score) of the ranking ``scores_of(query)`` returns, best first. It has no ``predicted``
    value of its own: the estimate fits the signals to the labelled queries. Its source is
    ``scores`` (``eval --predictor scores``), unless ``name`` says otherwise."""

    def __init__(
        self,
        scores_of: Callable[[PredictedQuery], Sequence[float]],
        *,
        name: str = "scores",
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


def pseudo_ndcg(
    ranking: Sequence[str],
    references: Sequence[Sequence[str]],
    *,
    depth: int = VOTE_DEPTH,
    k: int = NDCG_AT,
) -> float:
    """nDCG@k of ``ranking`` against pseudo-grades voted by ``references``: each reference
    ranking gives its hit at rank r (r < ``depth``, from 0) a vote of 1 / (r + 1). 1 when the
    ranking orders the voted hits as the votes do; 0 when no reference votes for any of its top
    k (or there are no votes)."""
    votes: dict[str, float] = {}
    for ranked in references:
        for r, doc in enumerate(ranked[:depth]):
            votes[doc] = votes.get(doc, 0.0) + 1.0 / (r + 1)
    dcg = sum(votes.get(doc, 0.0) / math.log2(r + 2) for r, doc in enumerate(ranking[:k]))
    best = sorted(votes.values(), reverse=True)[:k]
    ideal = sum(v / math.log2(r + 2) for r, v in enumerate(best))
    return dcg / ideal if ideal > 0 else 0.0


def rank_average(columns: Sequence[Sequence[float | None]]) -> list[float]:
    """Per row, the mean over ``columns`` of its value's percentile rank within the column
    ((rank − ½) / rows, ties sharing their mean rank; a missing value counts ½), in (0, 1).
    Signals on different scales combined without labels: each one's order is all that counts."""
    rows = len(columns[0]) if columns else 0
    total = [0.0] * rows
    for col in columns:
        present = sorted((v, i) for i, v in enumerate(col) if v is not None)
        pct = [0.5] * rows
        start = 0
        while start < len(present):
            end = start
            while end + 1 < len(present) and present[end + 1][0] == present[start][0]:
                end += 1
            mean_rank = (start + end) / 2 + 1  # ranks from 1, ties averaged
            for _, i in present[start : end + 1]:
                pct[i] = (mean_rank - 0.5) / len(present)
            start = end + 1
        total = [t + p for t, p in zip(total, pct, strict=True)]
    return [t / len(columns) for t in total] if columns else total


def consensus_values(signals: Sequence[dict[str, float]]) -> list[float]:
    """The :class:`Consensus` prediction of each query from its :data:`CONSENSUS_SIGNALS`
    (the rank average over the queries given together)."""
    return rank_average([[s.get(name) for s in signals] for name in CONSENSUS_SIGNALS])


class Consensus:
    """A fixed, label-free prediction of each query's effectiveness: the rank average of
    :data:`CONSENSUS_SIGNALS` over the queries predicted together. Nothing is fitted to labels
    (the estimate only weighs it by PPI++'s ``lam``), so a few dozen labels lose none of its
    correlation to a cross-fit.

    Each query is replayed as the traffic room does (:class:`~ragsonde.traffic.predictor.
    SignalPredictor`: the served ranking, dense and BM25 at depth 100): one embedding and
    three searches per query, and the collection's calibration on first use."""

    name = "consensus"

    def __init__(
        self, workspace: Workspace, search: SearchParams | None = None, *, collection: str | None
    ) -> None:
        from ragsonde.traffic.predictor import SignalPredictor

        self._signals = SignalPredictor(workspace, search, collection=collection)

    def predict(self, queries: Sequence[PredictedQuery]) -> list[QueryPrediction]:
        rows: list[dict[str, float]] = []
        for p, replay in self._signals.predict_replays(queries):
            refs = [r.ids for r in (replay.dense, replay.bm25, replay.served) if r is not None]
            row: dict[str, float] = {k: p.signals[k] for k in ("rbo", "gap") if k in p.signals}
            row["pseudo_ndcg"] = pseudo_ndcg(replay.served.ids, refs)
            if p.predicted is not None:
                row["predicted"] = p.predicted
            rows.append(row)
        return [
            QueryPrediction(query_id=q.query_id, source=self.name, predicted=v)
            for q, v in zip(queries, consensus_values(rows), strict=True)
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
