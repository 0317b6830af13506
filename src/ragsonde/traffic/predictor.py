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
``agree_top1``            where the served best result stands in the dense and BM25 rankings
                          (mean reciprocal rank: 1 when both put it first)
``rbo_dense``,            agreement of the served ranking with the dense and with the BM25
``rbo_bm25``              ranking (RBO p=0.9 at depth k)
``bm25_ratio``            the BM25 top-1 score over its k-th (its spread, free of its scale)
``max_idf``, ``avg_idf``, pre-retrieval: the query's BM25 terms' IDF in the collection
``scq``, ``terms``
``top1_pct``,             the dense top-1 score's percentile among the collection's own
``out_of_domain``         sentences (:mod:`~ragsonde.traffic.calibration`); 1 when it is 0
``results``,              how many results came back, and how many the threshold cut
``cut_by_threshold``
``ann_exact_overlap``     one query in ten: overlap@top_k of the HNSW ranking with exact search
========================  =====================================================================

``predicted`` is :func:`combine`: the mean of six signals' percentiles among the collection's own
sentences, documented there.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from typing import TypeVar

from ragsonde.models.params import SearchParams
from ragsonde.models.prediction import PredictedQuery, QueryPrediction
from ragsonde.traffic.calibration import Calibration, calibrate, own_fit
from ragsonde.traffic.logistic import Logistic
from ragsonde.traffic.replay import Embedded, Replay, Replayer
from ragsonde.traffic.signals import (
    agreement_at_top,
    idf_signals,
    overlap,
    ratio,
    rbo,
    score_signals,
    wig,
)
from ragsonde.traffic.switching import quick_switching
from ragsonde.workspace import Workspace

__all__ = [
    "ALL_SIGNALS",
    "BATCH",
    "CHROMA_FITS",
    "COMBINATION",
    "EMBED_AHEAD",
    "ISSUE_SIGNALS",
    "SIGNALS",
    "WEAK_BELOW",
    "SignalPredictor",
    "combination_of",
    "combine",
    "query_signals",
]

#: A query is weak when its ``predicted`` is below this: less confident than about nine in ten
#: of the collection's own sentences are (a fixed default, not fitted to labels).
WEAK_BELOW = 0.1

T = TypeVar("T")

#: Queries replayed together (one embedding call, one store request per ranking).
BATCH = 64
#: Batches :meth:`SignalPredictor.stream_replays` queues on its embedding worker beyond the one
#: it waits for (0: the next batch is read and queued only once this one is embedded, so the
#: model idles while this thread reads it; ``bench_traffic_speed --ahead-ab`` compares them).
EMBED_AHEAD = 1


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
    if replay.exact is not None and replay.dense is not None:
        out["ann_exact_overlap"] = overlap(
            replay.exact.ids, replay.dense.ids, len(replay.exact.ids)
        )
    if replay.bm25 is not None:
        out["terms"] = float(replay.terms)
        bm25 = score_signals(replay.bm25.scores, k)
        # no BM25 match at all: no score and no commitment, not an unknown
        out["bm25_top1"] = bm25.get("top1", 0.0)
        out["bm25_nqc"] = bm25.get("nqc", 0.0)
        out["wig"] = wig(replay.bm25.scores, k, replay.terms)
        out["bm25_ratio"] = ratio(replay.bm25.scores, k)
        if replay.dense is not None:
            out["overlap"] = overlap(replay.dense.ids, replay.bm25.ids, k)
            out["rbo"] = rbo(replay.dense.ids, replay.bm25.ids)
            if replay.served.ids:
                rankings = [replay.dense.ids, replay.bm25.ids]
                out["agree_top1"] = agreement_at_top(replay.served.ids[0], rankings)
                # what the served ranking kept of each ranking fused into it
                out["rbo_dense"] = rbo(replay.served.ids, replay.dense.ids, depth=k)
                out["rbo_bm25"] = rbo(replay.served.ids, replay.bm25.ids, depth=k)
        if calibration is not None and calibration.n_docs:
            out.update(idf_signals(calibration.term_df(replay.term_ids), calibration.n_docs))
    if calibration is not None and "dense_top1" in out:
        pct = calibration.percentile("dense_top1", out["dense_top1"])
        if pct is not None:
            out["top1_pct"] = pct
            out["out_of_domain"] = 1.0 if pct == 0.0 else 0.0
    return {name: v for name, v in out.items() if math.isfinite(v)}


#: Signals a combination may read: every signal above but the counts (``results``,
#: ``cut_by_threshold``), the out-of-domain flag and ``top1_pct`` (``dense_top1``'s percentile),
#: ``ann_exact_overlap`` (one query in ten has it), and ``rbo_dense``/``rbo_bm25`` (added after
#: :data:`CHROMA_FITS` was fitted on this list).
ALL_SIGNALS: tuple[str, ...] = (
    "top1", "gap", "nqc", "zscore",
    "dense_top1", "dense_gap", "dense_nqc", "dense_zscore",
    "bm25_top1", "bm25_nqc", "wig", "overlap", "rbo",
    "max_idf", "avg_idf", "scq", "terms",
    "agree_top1", "bm25_ratio",
)  # fmt: skip
#: The predictors the issue names (top-1, gap, NQC, WIG, dense/BM25 overlap and RBO): a signal
#: set fixed before anything was measured.
ISSUE_SIGNALS: tuple[str, ...] = ("top1", "gap", "nqc", "wig", "overlap", "rbo")

#: The signals ``predicted`` combines, with equal weights (the cross-fitting of ``--labels``
#: re-weights these): one of the score's level (``top1``: out of domain when low), three of its
#: spread (the served ranking's ``gap`` and ``nqc``, the dense ranking's NQC at depth 100,
#: BM25's NQC: a clear winner is a confident retrieval), one of agreement (``rbo`` of dense and
#: BM25). Chosen among SciFact's signals, so its SciFact figures are not held out (the bench
#: gives the held-out ones, and the label-free fits it was compared with: ``bench_traffic``).
SIGNALS: tuple[str, ...] = ("top1", "gap", "nqc", "dense_nqc", "bm25_nqc", "rbo")

#: A logistic combination per search mode of :data:`ALL_SIGNALS`' percentiles, fitted on Chroma's
#: chunking questions (319 questions on three
#: corpora that are not SciFact; target: chunk-level nDCG@10), never on SciFact's labels;
#: chosen among the label-free candidates by the rule of ``bench/bench_traffic.py`` and
#: refitted there (the bench checks these numbers are its fit). Not the default: it ranked
#: SciFact's queries worse than :data:`SIGNALS`' mean (bench/RESULTS.md), and its values are not
#: comparable across collections, so no fixed ``weak`` cut holds for it (in hybrid mode on
#: SciFact a cut at 0.3 flagged none of the weak queries). ``combine(model=...)`` takes it.
_CHROMA = "Chroma's chunking questions (319 questions on 3 corpora; target: chunk-level nDCG@10)"
CHROMA_FITS: dict[str, Logistic] = {
    "dense": Logistic(
        weights={
            "top1": 0.188066,
            "gap": 0.857144,
            "nqc": 0.526016,
            "zscore": 0.108181,
            "dense_top1": 0.188066,
            "dense_gap": -0.007199,
            "dense_nqc": 0.707071,
            "dense_zscore": 0.441734,
            "bm25_top1": 0.407631,
            "bm25_nqc": 0.193192,
            "wig": -0.446815,
            "overlap": -0.380767,
            "rbo": 0.632343,
            "max_idf": 0.514744,
            "avg_idf": -0.316877,
            "scq": 0.167948,
            "terms": 0.22099,
            "agree_top1": 1.594139,
            "bm25_ratio": -0.111487,
        },
        intercept=-1.941257,
        fitted_on=_CHROMA,
    ),
    "hybrid": Logistic(
        weights={
            "top1": 1.147085,
            "gap": 1.169468,
            "nqc": 1.125049,
            "zscore": 0.097143,
            "dense_top1": -0.4075,
            "dense_gap": 0.17329,
            "dense_nqc": 0.606404,
            "dense_zscore": 0.776674,
            "bm25_top1": 0.822626,
            "bm25_nqc": 0.317629,
            "wig": 0.14356,
            "overlap": 0.146075,
            "rbo": 0.345758,
            "max_idf": 0.530329,
            "avg_idf": -0.626244,
            "scq": 0.68964,
            "terms": 0.837959,
            "agree_top1": 0.295476,
            "bm25_ratio": 0.406715,
        },
        intercept=-0.893022,
        fitted_on=_CHROMA,
    ),
}


def combine(
    signals: dict[str, float], calibration: Calibration, model: Logistic | None = None
) -> float | None:
    """``predicted`` in [0, 1], higher is better: ``model`` when given (``--labels``'
    cross-fitted one), else the mean of :data:`SIGNALS`' percentiles among the collection's own
    sentences. 0 when nothing came back, and 0 when the query is out of domain: its best dense
    score is below that of every one of the collection's own sentences (the score spread of an
    off-topic query is noise, and NQC divides by a mean score near 0, so only the level can be
    trusted)."""
    if signals.get("results", 0.0) == 0.0 or signals.get("out_of_domain") == 1.0:
        return 0.0
    if model is not None:
        return model.predict(signals, calibration)
    pcts = [calibration.percentile(n, signals[n]) for n in SIGNALS if n in signals]
    known = [p for p in pcts if p is not None]
    return sum(known) / len(known) if known else None


#: How :func:`combine` makes ``predicted`` without a model (the report says it).
COMBINATION = "fixed: mean percentile among the collection's own sentences of " + ", ".join(SIGNALS)


def combination_of(calibration: Calibration) -> str:
    """:data:`COMBINATION` as it ran on a collection: the signals its calibration has none of
    (a collection without BM25 vectors has no ``bm25_nqc`` or ``rbo``) are named as left out,
    never claimed."""
    used = [n for n in SIGNALS if calibration.values.get(n)]
    absent = [n for n in SIGNALS if n not in used]
    if not absent:
        return COMBINATION
    why = (
        "the collection has no BM25 vectors ragsonde can query"
        if {"bm25_nqc", "rbo"} & set(absent)
        else "its own sentences have none"
    )
    return (
        "fixed: mean percentile among the collection's own sentences of "
        f"{', '.join(used) or 'no signal'} ({', '.join(absent)} left out: {why})"
    )


class SignalPredictor:
    """Replay each query in ``collection`` with ``search`` (over the workspace's settings) and
    predict its effectiveness from label-free signals.

    ``workspace``: its owner closes it. The collection is calibrated on first use
    (:func:`~ragsonde.traffic.calibration.calibrate`, cached under the home).
    """

    name = "traffic"
    """The source its predictions carry: ``eval --predictor traffic``'s name, as ``scores``,
    ``consensus`` and ``judge:NAME`` are theirs."""

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
        self._own_fit: tuple[Logistic | None] | None = None

    @property
    def calibration(self) -> Calibration:
        if self._calibration is None:
            self._calibration = calibrate(self.replayer, lambda r, c: query_signals(r, c, self.k))
        return self._calibration

    @property
    def own_fit(self) -> Logistic | None:
        """:data:`SIGNALS` combined by a fit on the collection's own sentences
        (:func:`~ragsonde.traffic.calibration.own_fit`), for ``combine(model=...)``: fitted on
        first use, never by the default ``predicted``."""
        if self._own_fit is None:
            self._own_fit = (own_fit(self.calibration, SIGNALS),)
        return self._own_fit[0]

    def predict_replays(
        self, queries: Sequence[PredictedQuery]
    ) -> list[tuple[QueryPrediction, Replay]]:
        """Each query's prediction with its replay (the traffic report reads both)."""
        batches = ((None, queries[i : i + BATCH]) for i in range(0, len(queries), BATCH))
        return [pair for _, done in self.stream_replays(batches) for pair in done]

    def stream_replays(
        self, batches: Iterable[tuple[T, Sequence[PredictedQuery]]]
    ) -> Iterator[tuple[T, list[tuple[QueryPrediction, Replay]]]]:
        """:meth:`predict_replays` of each batch of a stream, with its key: the batches are
        embedded on a worker thread while this one searches and scores the one before (the
        model releases the GIL while it runs, so on two cores its time overlaps this thread's;
        the embedded store's searches do not release it: qdrant-edge-py 0.9 holds it while its
        own threads search, and the worker then waits for it between two of the model's
        passes), the worker kept :data:`EMBED_AHEAD` batches ahead so that the model never
        waits for this thread to read the next batch."""
        from collections import deque
        from concurrent.futures import Future, ThreadPoolExecutor

        calibration = self.calibration
        replayer = self.replayer
        sparse = replayer.prepare()
        stream = iter(batches)
        pending: deque[tuple[T, Sequence[PredictedQuery], Future[Embedded]]] = deque()
        with quick_switching(), ThreadPoolExecutor(1, thread_name_prefix="ragsonde-embed") as pool:

            def fill(n: int) -> None:
                while len(pending) < n:
                    nxt = next(stream, None)
                    if nxt is None:
                        return
                    texts = [q.text for q in nxt[1]]
                    pending.append((nxt[0], nxt[1], pool.submit(replayer.embed, texts, sparse)))

            try:
                fill(1)
                while pending:
                    key, part, embedding = pending[0]
                    fill(1 + EMBED_AHEAD)  # queued on the worker before this thread waits
                    embedded = embedding.result()
                    pending.popleft()
                    fill(1)
                    replays = replayer.replay([q.text for q in part], embedded)
                    yield (
                        key,
                        [
                            self._predicted(q, r, calibration)
                            for q, r in zip(part, replays, strict=True)
                        ],
                    )
            finally:  # stopped early (an error, a consumer that left): embed no more
                for *_, queued in pending:
                    queued.cancel()

    def _predicted(
        self, q: PredictedQuery, replay: Replay, calibration: Calibration
    ) -> tuple[QueryPrediction, Replay]:
        signals = query_signals(replay, calibration, self.k)
        prediction = QueryPrediction(
            query_id=q.query_id,
            source=self.name,
            signals=signals,
            predicted=combine(signals, calibration),
        )
        return prediction, replay

    def predict(self, queries: Sequence[PredictedQuery]) -> list[QueryPrediction]:
        """One prediction per query, in the order given."""
        return [p for p, _ in self.predict_replays(queries)]
