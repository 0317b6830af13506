"""The Python library probed as an attacker and a careless user would: each call here was a
crash (an AttributeError, pydantic's ValidationError, a TypeError from the engine), a silent
wrong answer, or lost data; each is now the contract's error, raised where the input enters.
What was already refused cleanly is listed in ``docs/library.md``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragsonde import QueryValidationError, Retriever, StoreConnectionError, Workspace
from ragsonde.config import Settings
from ragsonde.embedders.onnx import OnnxEmbedder


def _refused(call: Callable[[], Any], field: str) -> str:
    with pytest.raises(QueryValidationError) as info:
        call()
    assert info.value.field == field, info.value
    return info.value.message


# -- an output that is an input: the data was replaced ----------------------------------------
def test_workflows_refuse_to_write_over_their_input(
    settings: Settings, bench: Path, tmp_path: Path
) -> None:
    from ragsonde.labels import GenerateOptions, JudgeOptions, generate, judge
    from ragsonde.traffic.run import TrafficOptions, traffic_report

    before = bench.read_bytes()
    with Workspace(settings) as ws:
        human = GenerateOptions(n=2, human=bench)
        msg = _refused(lambda: generate(bench, options=human, workspace=ws), "out")
        assert "is an input" in msg
        llm = JudgeOptions(llm="openai:gpt-4o-mini")
        _refused(lambda: judge(bench, bench, options=llm, workspace=ws), "out")
        save = TrafficOptions(save=bench)
        _refused(lambda: traffic_report([bench], ws, save), "save")
        history = TrafficOptions(save=tmp_path / "h.sqlite", history=tmp_path / "h.sqlite")
        _refused(lambda: traffic_report([bench], ws, history), "save")
    assert bench.read_bytes() == before


# -- a typo, a wrong type: ignored, or an AttributeError later ---------------------------------
def test_a_misspelt_setting_is_refused_not_ignored(tmp_path: Path) -> None:
    msg = _refused(lambda: Workspace(home=tmp_path, colection="docs"), "colection")
    assert "did you mean 'collection'" in msg
    _refused(lambda: Settings(embedder=3), "embedder")  # was pydantic's ValidationError
    _refused(lambda: Settings(home=tmp_path / "a\x00b"), "home")
    _refused(lambda: Settings(home=""), "home")  # it was the working folder itself
    _refused(lambda: Settings(home=str(tmp_path) + "/\ud800"), "home")
    _refused(lambda: Settings(qdrant_url="http://a\ud800b:6333"), "qdrant_url")
    _refused(lambda: Settings(mapping={"text": "\ud800"}), "mapping")


def test_a_collection_name_where_the_search_goes_is_refused_by_name(settings: Settings) -> None:
    """``SignalPredictor(ws, "docs")`` (documented in docs/traffic.md) and its ``Replayer``
    took the name for the search settings: ``'str' object has no attribute 'items'``."""
    from ragsonde.models.params import SearchParams
    from ragsonde.traffic.predictor import SignalPredictor
    from ragsonde.traffic.replay import Replayer

    with Workspace(settings) as ws:
        for make in (SignalPredictor, Replayer):
            assert "collection='docs'" in _refused(lambda m=make: m(ws, "docs"), "search")
            _refused(lambda m=make: m(ws, {"mode": "dense"}), "search")  # build the model
            _refused(lambda m=make: m("docs"), "workspace")
        replayer = Replayer(ws, SearchParams(top_k=3), collection="docs")  # as documented
        assert (replayer.params.top_k, replayer.collection) == (3, "docs")


@pytest.mark.parametrize("weights", [[float("nan"), 1.0], [float("inf"), 1.0]])
def test_fusion_weights_must_be_finite(settings: Settings, weights: list[float]) -> None:
    search = {"fusion": "linear", "fusion_weights": weights}  # NaN passed "none negative"
    _refused(lambda: Settings(search=search), "search.fusion_weights")
    with Retriever(settings) as r:
        resp = r.retrieve({"query": "lidar", "search": search})
    assert resp.error is not None and resp.error.code == "VALIDATION_ERROR"
    assert "finite" in resp.error.message


@pytest.mark.parametrize("weights", [[1e308, 1e308], [1e7, 1.0], [0.0, 5e-324]])
def test_fusion_weights_are_bounded(settings: Settings, weights: list[float]) -> None:
    """1e308 was taken: the fused score (w_dense * cosine + w_sparse * bm25 / max_bm25)
    overflowed to inf; 5e-324 made every fused score one value. Only the ratio ranks."""
    search = {"fusion": "linear", "fusion_weights": weights}
    assert "from 0 to 1e6" in _refused(lambda: Settings(search=search), "search.fusion_weights")
    with Retriever(settings) as r:
        resp = r.retrieve({"query": "lidar", "search": search})
    assert resp.error is not None and resp.error.code == "VALIDATION_ERROR"
    assert "search.fusion_weights" in resp.error.message and "1e6" in resp.error.message
    for fusion, edge in [("linear", [1e6, 0.0]), ("rrf", [0.0, 1e-6])]:  # the bounds are taken
        assert Settings(search={"fusion": fusion, "fusion_weights": edge}).search.fusion_weights


def test_wrong_types_are_refused_where_they_enter(settings: Settings, bench: Path) -> None:
    from ragsonde.chunking.sweep import sweep_chunking
    from ragsonde.evaluate import evaluate, evaluate_against
    from ragsonde.ingest import ingest
    from ragsonde.traffic.run import traffic_report

    _refused(lambda: Retriever({"collection": "docs"}), "settings")
    _refused(lambda: Workspace({"collection": "docs"}), "settings")
    _refused(lambda: Retriever(settings, embedder="local:x"), "embedder")
    _refused(lambda: Retriever(settings, store="edge"), "store")
    _refused(lambda: Retriever(settings, limits={"max_top_k": 3}), "limits")
    _refused(lambda: Retriever(settings, search="hnsw_ef=3"), "search")
    _refused(lambda: Retriever(settings, search={"top_k": -3}), "search.top_k")
    with Workspace(settings) as ws:
        opts: Any = {"gates": ["ndcg@10>=0.5"]}
        _refused(lambda: evaluate(bench, opts, ws), "options")
        _refused(lambda: evaluate(bench, None, settings), "workspace")
        for url in ("", "http://\ud800:6333"):  # an AssertionError; a message no one can print
            _refused(lambda: evaluate_against(bench, url, None, ws), "against")  # noqa: B023
        _refused(lambda: evaluate(bytes(bench), workspace=ws), "dataset")
        _refused(lambda: ingest(str(bench), options=opts, workspace=ws), "options")
        _refused(lambda: ingest(bytes(bench), workspace=ws), "source")
        _refused(lambda: sweep_chunking(bytes(bench), workspace=ws), "source")
        # one path where a list belongs was read as the files '/', 't', 'm', 'p', …
        _refused(lambda: traffic_report(str(bench), ws), "traffic")
        for sample in (-1, 0, float("nan"), True):
            _refused(lambda: ws.inspect("docs", sample=sample), "sample")  # noqa: B023


def test_bad_numbers_are_validation_errors_not_pydantic_ones(bench: Path) -> None:
    from ragsonde.explain import explain_query
    from ragsonde.traffic.run import TrafficOptions

    _refused(lambda: TrafficOptions(k=float("nan")), "k")
    for name, value in [("k", float("nan")), ("k", -1), ("fetch", 0), ("score_threshold", 5)]:
        _refused(lambda: explain_query(bench, "q1", **{name: value}), name)  # noqa: B023
    msg = _refused(lambda: explain_query(bench, "\ud800"), "query_id")
    assert "\ud800" not in msg


def test_a_path_that_is_no_text_is_echoed_printable(settings: Settings) -> None:
    from ragsonde.evaluate import evaluate
    from ragsonde.ingest import ingest

    with Workspace(settings) as ws:
        for call in (lambda: evaluate("b\ud800.jsonl", workspace=ws), lambda: ingest("d\ud800")):
            with pytest.raises(QueryValidationError) as info:
                call()
            str(info.value).encode("utf-8")  # printable: it was a UnicodeEncodeError on print


# -- the real model and a real collection --------------------------------------------------------
def test_a_path_object_is_ingested(
    settings: Settings, embedder: OnnxEmbedder, tmp_path: Path
) -> None:
    from ragsonde.ingest import ingest

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nLidar measures distance with laser pulses.\n")
    report = ingest(docs, settings=settings, embedder=embedder)  # an AttributeError before
    assert (report.collection, report.chunks) == ("docs", 1)


def test_a_filter_integer_beyond_64_bits_is_an_error_response(
    sample_home: Path, embedder: OnnxEmbedder
) -> None:
    with Retriever(Settings(home=sample_home, collection="robotics"), embedder=embedder) as r:
        resp = r.retrieve({"query": "lidar", "filters": {"section": 10**30}})
    assert resp.error is not None and resp.error.code == "VALIDATION_ERROR"
    assert "64-bit" in resp.error.message


def test_a_closed_workspace_opens_no_store_again(sample_home: Path, embedder: OnnxEmbedder) -> None:
    settings = Settings(home=sample_home, collection="robotics")
    ws = Workspace(settings, embedder=embedder)
    r = Retriever(workspace=ws)
    assert r.retrieve({"query": "lidar"}).status == "success"
    ws.close()
    resp = r.retrieve({"query": "lidar"})  # it searched, holding the collection again
    assert resp.error is not None and resp.error.code == "CONNECTION_ERROR"
    assert "closed" in resp.error.message
    with pytest.raises(StoreConnectionError):
        ws.store  # noqa: B018
    with Retriever(settings, embedder=embedder) as other:  # the collection was let go
        assert other.retrieve({"query": "lidar"}).status == "success"


def test_history_and_estimates_refuse_what_is_no_input(tmp_path: Path) -> None:
    from ragsonde.estimate import classical_mean, estimate_metric
    from ragsonde.history import HistoryStore

    for name in ("a\x00b.sqlite", "a\ud800.sqlite"):  # ValueError, UnicodeEncodeError
        msg = _refused(lambda: HistoryStore(tmp_path / name), "history")  # noqa: B023
        assert "damaged" not in msg
        msg.encode("utf-8")
    with HistoryStore(tmp_path / "h.sqlite") as history:
        # a lone surrogate was "History file … is damaged"; "" matched every run
        _refused(lambda: history.runs(collection="\ud800"), "collection")
        _refused(lambda: history.runs(collection=""), "collection")
        _refused(lambda: history.runs(benchmark=""), "benchmark")
        _refused(lambda: history.runs(limit=-1), "limit")  # SQLite's LIMIT -1: every run
    # "ab" was the query ids 'a' and 'b'
    _refused(lambda: estimate_metric({"a": 0.5, "b": 1.0}, "ab"), "ids")
    _refused(lambda: classical_mean("abc"), "y")  # numpy's ValueError


def test_the_framework_retrievers_take_options_strictly(settings: Settings) -> None:
    from ragsonde.integrations.langchain import RagsondeRetriever as LangChainRetriever
    from ragsonde.integrations.llamaindex import RagsondeRetriever as LlamaIndexRetriever

    with Retriever(settings) as r:
        lc = LangChainRetriever(retriever=r, k=3)
        for k in (True, "2", 2.0):  # k=True was a top_k of 1, "2" a 2
            _refused(lambda: lc.invoke("lidar", k=k), "top_k")  # noqa: B023
        _refused(lambda: lc.invoke("lidar", collection=""), "collection")
        _refused(lambda: LlamaIndexRetriever({"top_k": 3}), "retriever")  # an AttributeError later
        _refused(lambda: LlamaIndexRetriever(r, top_k=0), "top_k")  # was pydantic's error


@pytest.mark.parametrize("text", ["\x00", "\x00\x01 \u200b"])
def test_a_query_of_control_characters_only_is_empty(settings: Settings, text: str) -> None:
    with Retriever(settings) as r:
        resp = r.retrieve({"query": text})  # it searched, and answered 5 hits for nothing
    assert resp.error is not None and resp.error.code == "VALIDATION_ERROR"
    assert "visible character" in resp.error.message


def test_the_html_report_is_never_written_over_its_benchmark(
    sample_home: Path, embedder: OnnxEmbedder, bench: Path
) -> None:
    from ragsonde.evaluate import evaluate
    from ragsonde.evaluate.html import write_html_report

    settings = Settings(home=sample_home, collection="robotics")
    with Workspace(settings, embedder=embedder) as ws:
        report = evaluate(bench, workspace=ws, record=False)
    before = bench.read_bytes()
    _refused(lambda: write_html_report(report, bench), "path")
    assert bench.read_bytes() == before
