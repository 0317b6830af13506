"""Label-free health of each query: :class:`SignalPredictor`, the traffic room's
:class:`~ragsonde.models.prediction.Predictor`.

For each query it replays the search (:mod:`ragsonde.traffic.replay`) and reports these
``signals`` (a signal that cannot be computed is absent):

========================  =====================================================================
``top1``, ``gap``,        the served ranking's scores (:data:`~ragsonde.traffic.signals.
``nqc``, ``zscore``       SCORE_SIGNALS`` at k), what ragsonde returns with the search settings
``dense_*``               the same four on the dense ranking at depth 100
``bm25_top1``,            the BM25 ranking (where the collection has BM25 vectors): its best
``bm25_nqc``, ``wig``     score, NQC and WIG
``overlap``, ``rbo``      agreement of the dense and BM25 rankings (overlap@k, RBO p=0.9)
``max_idf``, ``avg_idf``, pre-retrieval: the query's BM25 terms' IDF in the collection
``scq``, ``terms``
``top1_pct``              the dense top-1 score's percentile among the collection's own
                          sentences (:mod:`~ragsonde.traffic.calibration`): out of domain when low
``results``,              how many results came back, and how many the threshold cut
``cut_by_threshold``
========================  =====================================================================

``predicted`` is :func:`combine`: a fixed combination, documented there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ragsonde.models.params import SearchParams
from ragsonde.models.prediction import PredictedQuery, QueryPrediction
from ragsonde.traffic.calibration import Calibration, calibrate
from ragsonde.traffic.replay import Replay, Replayer
from ragsonde.traffic.signals import idf_signals, overlap, rbo, score_signals, wig
from ragsonde.workspace import Workspace

__all__ = ["BATCH", "WEIGHTS", "SignalPredictor", "combine", "query_signals"]

#: Queries replayed together (one embedding call, one store request per ranking).
BATCH = 64


def query_signals(replay: Replay, calibration: Calibration | None, k: int = 10) -> dict[str, float]:
    """Every signal of one replayed query (see the module's table)."""
    out: dict[str, float] = {
        "results": float(len(replay.served.ids)),
        "cut_by_threshold": float(replay.cut_by_threshold),
    }
    out.update(score_signals(replay.served.scores, k))
    if replay.dense is not None:
        dense = score_signals(replay.dense.scores, k)
        out.update({f"dense_{name}": v for name, v in dense.items()})
    if replay.bm25 is not None:
        out["terms"] = float(replay.terms)
        bm25 = score_signals(replay.bm25.scores, k)
        out["bm25_top1"] = bm25.get("top1", 0.0)
        if "nqc" in bm25:
            out["bm25_nqc"] = bm25["nqc"]
        out["wig"] = wig(replay.bm25.scores, k, replay.terms)
        if replay.dense is not None:
            out["overlap"] = overlap(replay.dense.ids, replay.bm25.ids, k)
            out["rbo"] = rbo(replay.dense.ids, replay.bm25.ids)
        if calibration is not None and calibration.n_docs:
            out.update(idf_signals(calibration.term_df(replay.term_ids), calibration.n_docs))
    if calibration is not None and "dense_top1" in out:
        pct = calibration.percentile("dense_top1", out["dense_top1"])
        if pct is not None:
            out["top1_pct"] = pct
    return {name: v for name, v in out.items() if math.isfinite(v)}


#: The fixed combination: signal -> weight. ``predicted`` is the weighted mean of each signal's
#: percentile among the collection's own sentences (:class:`Calibration`), over the signals the
#: query has.
WEIGHTS: dict[str, float] = {
    "dense_top1": 1.0,
    "dense_nqc": 1.0,
    "rbo": 1.0,
}


def combine(signals: dict[str, float], calibration: Calibration) -> float | None:
    """``predicted`` in [0, 1]: the :data:`WEIGHTS`-weighted mean of the query's signals'
    percentiles among the collection's own sentences. 0 when nothing came back."""
    if signals.get("results", 0.0) == 0.0:
        return 0.0
    total = weight = 0.0
    for name, w in WEIGHTS.items():
        if name not in signals:
            continue
        pct = calibration.percentile(name, signals[name])
        if pct is not None:
            total += w * pct
            weight += w
    return total / weight if weight else None


class SignalPredictor:
    """Replay each query in ``collection`` with ``search`` (over the workspace's settings) and
    predict its effectiveness from label-free signals.

    ``workspace``: its owner closes it. The collection is calibrated on first use
    (:func:`~ragsonde.traffic.calibration.calibrate`, cached under the home).
    """

    name = "signals"

    def __init__(
        self,
        workspace: Workspace,
        search: SearchParams | None = None,
        *,
        collection: str | None = None,
        k: int = 10,
    ) -> None:
        self.replayer = Replayer(workspace, search, collection)
        self.k = k
        self._calibration: Calibration | None = None

    @property
    def calibration(self) -> Calibration:
        if self._calibration is None:
            self._calibration = calibrate(self.replayer, lambda r, c: query_signals(r, c, self.k))
        return self._calibration

    def predict_replays(
        self, queries: Sequence[PredictedQuery]
    ) -> list[tuple[QueryPrediction, Replay]]:
        """Each query's prediction with its replay (the traffic report reads both)."""
        calibration = self.calibration
        out: list[tuple[QueryPrediction, Replay]] = []
        for start in range(0, len(queries), BATCH):
            part = queries[start : start + BATCH]
            for q, replay in zip(part, self.replayer.replay([q.text for q in part]), strict=True):
                signals = query_signals(replay, calibration, self.k)
                prediction = QueryPrediction(
                    query_id=q.query_id,
                    source=self.name,
                    signals=signals,
                    predicted=combine(signals, calibration),
                )
                out.append((prediction, replay))
        return out

    def predict(self, queries: Sequence[PredictedQuery]) -> list[QueryPrediction]:
        """One prediction per query, in the order given."""
        return [p for p, _ in self.predict_replays(queries)]
