"""ragsonde's own retrieval spans, through the OpenTelemetry SDK: their shape, the opt-in
content, the server continuing a caller's ``traceparent``, and ``ragsonde traffic`` reading
them back (round trip) and naming the setting production ran with."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from ragsonde import tracing
from ragsonde.config import Settings
from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.retriever import Retriever
from ragsonde.server.app import create_app
from ragsonde.traffic.read import read_traffic
from ragsonde.traffic.run import analyse
from ragsonde.workspace import Workspace
from tests.support import run_server
from tests.traffic.support import otlp_json_lines

QUESTIONS = [
    "how do I calibrate the laser scanner?",
    "why does my heading drift after turning on?",
    "what voltage should a LiPo cell never go below?",
]


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    try:
        yield exporter
    finally:
        tracing.use_provider(None)
        provider.shutdown()


def _attrs(span: Any) -> dict[str, Any]:
    return dict(span.attributes or {})


def test_a_retrieval_is_a_genai_span_with_its_stages_and_no_text_unless_asked(
    sample_home: Path,
    embedder: OnnxEmbedder,
    spans: InMemorySpanExporter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("RAGSONDE_TRACE_CONTENT", raising=False)
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    settings = Settings(home=sample_home, collection="robotics")
    with Retriever(settings, embedder=embedder) as r:
        resp = r.retrieve({"query_text": QUESTIONS[0], "top_k": 3, "score_threshold": 0.1})
    finished = spans.get_finished_spans()
    root = next(s for s in finished if s.name == "retrieval robotics")
    attrs = _attrs(root)
    assert attrs["gen_ai.operation.name"] == "retrieval"
    assert attrs["gen_ai.data_source.id"] == "robotics" and attrs["gen_ai.retrieval.top_k"] == 3
    assert (
        attrs["ragsonde.search.score_threshold"] == 0.1 and attrs["ragsonde.search.mode"] == "dense"
    )
    assert "gen_ai.retrieval.query.text" not in attrs and "gen_ai.retrieval.documents" not in attrs
    children = [
        s for s in finished if s.parent is not None and s.parent.span_id == root.context.span_id
    ]
    names = sorted(s.name.split(" ")[0] for s in children)
    assert names == ["embeddings", "post_processing", "search"]
    search = next(s for s in children if s.name.startswith("search"))
    assert _attrs(search)["ragsonde.search.top_k"] == 3
    embed = next(s for s in children if s.name.startswith("embeddings"))
    assert (embed.end_time - embed.start_time) / 1e6 == pytest.approx(
        resp.timings.embedding_ms, abs=0.01
    )
    assert root.start_time <= embed.start_time and search.end_time <= root.end_time


def test_round_trip_ragsonde_reads_its_own_spans_and_names_the_top_k_it_ran_with(
    sample_home: Path,
    embedder: OnnxEmbedder,
    spans: InMemorySpanExporter,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("RAGSONDE_TRACE_CONTENT", "1")
    settings = Settings(home=sample_home, collection="robotics")
    with Workspace(settings, embedder=embedder) as ws:
        with Retriever(workspace=ws) as r:
            served = {q: r.retrieve({"query_text": q, "top_k": 3}) for q in QUESTIONS}
        path = tmp_path / "ragsonde.otlp.json"
        path.write_text(otlp_json_lines(spans.get_finished_spans()), encoding="utf-8")
        traffic = read_traffic([path])
        assert traffic.stats.other_spans == 3 * len(QUESTIONS)  # the stage spans
        got = {q.query: q for q in traffic.queries}
        assert set(got) == set(QUESTIONS)
        for text, resp in served.items():
            prod = got[text].production
            assert prod is not None and prod.ids == [x.chunk_id for x in resp.results]
            assert prod.top_k == 3 and prod.mode == "dense" and prod.collection == "robotics"
            assert got[text].query_id == resp.query_id
        report = analyse(traffic, ws)  # replayed with the settings' top_k, 5
    assert report.search.top_k == 5
    for q in report.queries:
        assert q.production_agreement == pytest.approx(3 / 5)
        assert q.mismatch == ["top_k: production 3, replay 5"]
    assert report.production is not None and report.production.explained_by == {"top_k": 3}
    assert "top_k: production 3, replay 5" in report.production.verdict


def test_the_server_continues_the_callers_trace(
    sample_home: Path, embedder: OnnxEmbedder, spans: InMemorySpanExporter
) -> None:
    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    parent = "00f067aa0ba902b7"
    settings = Settings(home=sample_home, collection="robotics")
    with Retriever(settings, embedder=embedder) as r, run_server(create_app(settings, r)) as url:
        answer = httpx.post(
            f"{url}/v1/query",
            json={"query_text": QUESTIONS[1]},
            headers={"traceparent": f"00-{trace_id}-{parent}-01"},
            timeout=60,
        )
    assert answer.status_code == 200
    root = next(s for s in spans.get_finished_spans() if s.name == "retrieval robotics")
    assert f"{root.context.trace_id:032x}" == trace_id
    assert root.parent is not None and f"{root.parent.span_id:016x}" == parent


def test_a_server_span_of_an_instrumentation_stays_the_retrievals_parent(
    sample_home: Path, embedder: OnnxEmbedder, spans: InMemorySpanExporter
) -> None:
    """With an ASGI instrumentation's server span current (FastAPI's continues the caller's
    trace itself), the retrieval was made a sibling of that span, and under a garbage
    traceparent a trace of its own."""
    from opentelemetry import context, propagate

    http = TracerProvider()  # the instrumentation's own provider, into the same exporter
    http.add_span_processor(SimpleSpanProcessor(spans))
    tracer = http.get_tracer("tests.http")

    def instrumented(app: Any) -> Any:
        async def asgi(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            headers = {bytes(k).decode(): bytes(v).decode() for k, v in scope["headers"]}
            token = context.attach(propagate.extract(headers))
            try:
                with tracer.start_as_current_span("HTTP POST"):
                    await app(scope, receive, send)
            finally:
                context.detach(token)

        return asgi

    trace_id = "4bf92f3577b34da6a3ce929d0e0e4736"
    settings = Settings(home=sample_home, collection="robotics")
    app = instrumented(create_app(settings, Retriever(settings, embedder=embedder)))
    with run_server(app) as url:
        for traceparent in (f"00-{trace_id}-00f067aa0ba902b7-01", "garbage"):
            answer = httpx.post(
                f"{url}/v1/query",
                json={"query_text": QUESTIONS[1]},
                headers={"traceparent": traceparent},
                timeout=60,
            )
            assert answer.status_code == 200
    done = spans.get_finished_spans()
    servers = [s for s in done if s.name == "HTTP POST"]
    retrievals = [s for s in done if s.name == "retrieval robotics"]
    assert len(servers) == len(retrievals) == 2
    for server, retrieval in zip(servers, retrievals, strict=True):
        assert retrieval.parent is not None and retrieval.parent.span_id == server.context.span_id
        assert retrieval.context.trace_id == server.context.trace_id
    assert f"{servers[0].context.trace_id:032x}" == trace_id
