"""SignalPredictor on the real model and an embedded collection with dense and BM25 vectors.

The known truth: questions about the robotics documents are in domain; questions about cooking,
football or tax law are not, so every one of them must be predicted weaker than the in-domain
questions are on the whole."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from ragsonde.config import Settings
from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.evaluate.datasets import load_benchmark
from ragsonde.models.params import SearchParams
from ragsonde.models.prediction import PredictedQuery, Predictor
from ragsonde.samples import robotics_benchmark
from ragsonde.traffic.logistic import L2
from ragsonde.traffic.predictor import SIGNALS, SignalPredictor, combine
from ragsonde.workspace import Workspace
from tests.support import robotics_hybrid

OFF_TOPIC = [
    "how long should I bake banana bread at 180 degrees?",
    "who won the football world cup in 1998?",
    "can I deduct my home office from my income tax?",
    "what is the best fertilizer for tomato plants?",
    "how do I knit a scarf with two colours?",
    "what wine goes with grilled salmon?",
    "when did the roman empire fall?",
    "how many calories are in an avocado?",
]


@pytest.fixture(scope="module")
def hybrid_home(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxEmbedder) -> Path:
    return robotics_hybrid(tmp_path_factory.mktemp("traffic"), embedder)


def _queries() -> tuple[list[PredictedQuery], list[bool]]:
    inside = [
        PredictedQuery(query_id=q.query_id, text=q.text)
        for q in load_benchmark(robotics_benchmark()).queries
    ]
    outside = [PredictedQuery(query_id=f"off{i}", text=t) for i, t in enumerate(OFF_TOPIC)]
    return inside + outside, [True] * len(inside) + [False] * len(outside)


@pytest.mark.parametrize("mode", ["dense", "hybrid"])
def test_off_topic_questions_are_predicted_weak(
    hybrid_home: Path, embedder: OnnxEmbedder, mode: str
) -> None:
    queries, in_domain = _queries()
    settings = Settings(home=hybrid_home, collection="robotics")
    with Workspace(settings, embedder=embedder) as ws:
        predictor = SignalPredictor(ws, SearchParams(mode=mode))
        assert isinstance(predictor, Predictor)
        got = predictor.predict(queries)
    assert [p.query_id for p in got] == [q.query_id for q in queries]
    assert all(p.source == "traffic" and p.predicted is not None for p in got)
    assert all(0.0 <= (p.predicted or 0.0) <= 1.0 for p in got)
    missing = {p.query_id: set(SIGNALS) - set(p.signals) for p in got}
    assert not any(missing.values()), missing  # every signal of the combination
    sampled = [p.signals["ann_exact_overlap"] for p in got if "ann_exact_overlap" in p.signals]
    assert 0 < len(sampled) < len(got) / 3  # about one query in ten is searched exactly too
    assert set(sampled) == {1.0}  # a collection this small is searched exactly by HNSW too
    auc = roc_auc_score(in_domain, [p.predicted for p in got])
    assert auc >= 0.9, f"in-domain vs off-topic AUC {auc:.3f}"
    top1 = roc_auc_score(in_domain, [p.signals["top1_pct"] for p in got])
    assert top1 >= 0.9, f"the calibrated top-1 separates them too: {top1:.3f}"


def test_the_calibration_is_measured_once_per_collection_and_search(
    hybrid_home: Path, embedder: OnnxEmbedder
) -> None:
    settings = Settings(home=hybrid_home, collection="robotics")
    folder = hybrid_home / "traffic" / "calibration"
    with Workspace(settings, embedder=embedder) as ws:
        first = SignalPredictor(ws).calibration
        files = {p: p.stat().st_mtime_ns for p in folder.glob("*.json")}
        again = SignalPredictor(ws).calibration
        assert {p: p.stat().st_mtime_ns for p in folder.glob("*.json")} == files
        assert again == first and first.rows and first.n_docs > 0
        assert SignalPredictor(ws, SearchParams(top_k=3)).calibration.key != first.key
    assert len(list(folder.glob("*.json"))) == len(files) + 1  # another search: its own


def test_each_mode_fits_its_own_combination_on_the_collections_own_sentences(
    hybrid_home: Path, embedder: OnnxEmbedder
) -> None:
    """No human label: the calibration's sentences, each with its own chunk as the answer, fit
    a logistic combination per mode. It must be the optimum of its objective (the gradient of
    the penalised log-loss is zero there: checked with numpy, not the fit's code), and
    ``predicted`` made with it must rank the off-topic questions below the in-domain ones."""
    queries, in_domain = _queries()
    settings = Settings(home=hybrid_home, collection="robotics")
    weights = {}
    with Workspace(settings, embedder=embedder) as ws:
        for mode in ("dense", "hybrid"):
            predictor = SignalPredictor(ws, SearchParams(mode=mode))
            calibration = predictor.calibration
            fit = predictor.own_fit
            assert fit is not None and calibration.mode == mode
            assert "own sentences" in fit.fitted_on
            names = list(fit.weights)
            assert set(names) == set(SIGNALS) & set(calibration.values)
            x = np.array(
                [
                    [calibration.percentile(n, r[n]) if n in r else 0.5 for n in names] + [1.0]
                    for r in calibration.rows
                ]
            )
            w = np.array([fit.weights[n] for n in names] + [fit.intercept])
            p = 1.0 / (1.0 + np.exp(-(x @ w)))
            gradient = x.T @ (p - np.array(calibration.found)) + np.r_[L2 * w[:-1], 0.0]
            assert np.abs(gradient).max() < 1e-3 * len(calibration.rows)  # rounded weights
            got = [combine(q.signals, calibration, fit) for q in predictor.predict(queries)]
            auc = roc_auc_score(in_domain, got)
            assert auc >= 0.9, f"{mode}: in-domain vs off-topic AUC {auc:.3f} with the own fit"
            weights[mode] = fit.weights
    assert weights["dense"] != weights["hybrid"]  # each mode its own weights


def test_the_stream_embeds_ahead_without_changing_a_prediction(
    hybrid_home: Path, embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker embeds the next batch while this one is searched: each batch's predictions
    are those of the batch predicted alone, and a consumer that leaves after the first batch
    has had at most the batch queued behind it embedded, not the rest of the stream."""
    queries, _ = _queries()
    batches = [queries[i : i + 4] for i in range(0, len(queries), 4)]
    assert len(batches) > 4
    with Workspace(Settings(home=hybrid_home, collection="robotics"), embedder=embedder) as ws:
        predictor = SignalPredictor(ws)
        alone = [[p for p, _ in predictor.predict_replays(b)] for b in batches]
        streamed = predictor.stream_replays(enumerate(batches))
        assert [[p for p, _ in done] for _, done in streamed] == alone
        embedded: list[list[str]] = []
        real = predictor.replayer.embed

        def counted(texts: list[str], sparse: bool) -> object:
            embedded.append(list(texts))
            return real(texts, sparse)

        monkeypatch.setattr(predictor.replayer, "embed", counted)
        stream = predictor.stream_replays(enumerate(batches))
        key, first = next(stream)
        stream.close()
    assert key == 0 and [p for p, _ in first] == alone[0]
    assert embedded == [[q.text for q in b] for b in batches[:2]]


def test_searches_in_chunks_find_what_one_request_finds(
    hybrid_home: Path, embedder: OnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The replay sends its searches in requests of SEARCH_CHUNK queries (each holds the GIL
    for less time): every ranking and prediction is the one a single request gives."""
    from ragsonde.traffic import replay

    queries, _ = _queries()
    assert len(queries) > 7
    with Workspace(Settings(home=hybrid_home, collection="robotics"), embedder=embedder) as ws:
        predictor = SignalPredictor(ws, SearchParams(mode="hybrid"))
        monkeypatch.setattr(replay, "SEARCH_CHUNK", 10**6)
        whole = predictor.predict_replays(queries)
        sizes: list[int] = []
        real = ws.store.ranked

        def counted(collection: str, specs: list[object]) -> object:
            sizes.append(len(specs))
            return real(collection, specs)  # type: ignore[arg-type]

        monkeypatch.setattr(ws.store, "ranked", counted)
        monkeypatch.setattr(replay, "SEARCH_CHUNK", 3)
        chunked = predictor.predict_replays(queries)
    assert sizes and max(sizes) == 3 and sum(sizes) > len(queries)
    assert [p for p, _ in chunked] == [p for p, _ in whole]
    for (_, a), (_, b) in zip(chunked, whole, strict=True):
        assert (tuple(a.served.ids), a.served.scores) == (tuple(b.served.ids), b.served.scores)
        assert a.dense == b.dense and a.bm25 == b.bm25 and a.exact == b.exact


def test_the_replay_lowers_the_switch_interval_while_it_runs(
    hybrid_home: Path, embedder: OnnxEmbedder
) -> None:
    """While a stream of replays runs, the interpreter switches threads every SWITCH_INTERVAL
    (the embedding worker gets the GIL back quickly); the interval found is back once the
    stream is done, and once a consumer left early."""
    import sys

    from ragsonde.traffic.switching import SWITCH_INTERVAL

    queries, _ = _queries()
    batches = [queries[i : i + 8] for i in range(0, len(queries), 8)]
    before = sys.getswitchinterval()
    assert before > SWITCH_INTERVAL
    with Workspace(Settings(home=hybrid_home, collection="robotics"), embedder=embedder) as ws:
        predictor = SignalPredictor(ws)
        during = [sys.getswitchinterval() for _ in predictor.stream_replays(enumerate(batches))]
        assert during == [SWITCH_INTERVAL] * len(batches)
        assert sys.getswitchinterval() == before
        stream = predictor.stream_replays(enumerate(batches))
        next(stream)
        assert sys.getswitchinterval() == SWITCH_INTERVAL
        stream.close()
    assert sys.getswitchinterval() == before
