"""The span of one response, without a model: error status, opt-in content by either variable."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from ragsonde import tracing
from ragsonde.errors import CollectionNotFoundError
from ragsonde.models import Response, Result, Timings

T0 = 1_800_000_000_000_000_000


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> Iterator[InMemorySpanExporter]:
    for var in ("RAGSONDE_TRACE_CONTENT", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"):
        monkeypatch.delenv(var, raising=False)
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    yield exporter
    tracing.use_provider(None)
    provider.shutdown()


def _ok() -> Response:
    results = [
        Result(chunk_id="7", text="t", similarity_score=0.8, rank=0),
        Result(chunk_id="9", text="u", similarity_score=0.5, rank=1),
    ]
    return Response(
        query="where is the imu?",
        query_id="q1",
        status="success",
        results=results,
        total_results=2,
        top_k_requested=2,
        collection="docs",
        model="m",
        timings=Timings(embedding_ms=2.0, search_ms=3.0, post_processing_ms=1.0, total_ms=6.5),
    )


def test_stage_spans_follow_each_other_inside_the_retrieval(spans: InMemorySpanExporter) -> None:
    tracing.trace_retrieval(_ok(), T0)
    by_name = {s.name.split(" ")[0]: s for s in spans.get_finished_spans()}
    root, embed = by_name["retrieval"], by_name["embeddings"]
    search, post = by_name["search"], by_name["post_processing"]
    assert root.start_time == T0 and root.end_time == T0 + 6_500_000
    assert (embed.start_time, embed.end_time) == (T0, T0 + 2_000_000)
    assert (search.start_time, search.end_time) == (T0 + 2_000_000, T0 + 5_000_000)
    assert (post.start_time, post.end_time) == (T0 + 5_000_000, T0 + 6_000_000)
    assert root.status.status_code is StatusCode.UNSET


@pytest.mark.parametrize(
    "var", ["RAGSONDE_TRACE_CONTENT", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"]
)
def test_content_only_on_opt_in(
    spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch, var: str
) -> None:
    monkeypatch.setenv(var, "true")
    tracing.trace_retrieval(_ok(), T0)
    root = next(s for s in spans.get_finished_spans() if s.name == "retrieval docs")
    attrs = dict(root.attributes or {})
    assert attrs["gen_ai.retrieval.query.text"] == "where is the imu?"
    docs = json.loads(str(attrs["gen_ai.retrieval.documents"]))
    assert docs == [{"id": "7", "score": 0.8}, {"id": "9", "score": 0.5}]


def test_an_error_response_is_an_error_span(spans: InMemorySpanExporter) -> None:
    failed = Response.failure(
        CollectionNotFoundError("nope"),
        query="q",
        query_id="q2",
        top_k=5,
        collection="nope",
        model="m",
    )
    tracing.trace_retrieval(failed, T0)
    root = next(s for s in spans.get_finished_spans() if s.name == "retrieval nope")
    assert root.status.status_code is StatusCode.ERROR
    assert dict(root.attributes or {})["error.type"] == "COLLECTION_NOT_FOUND"
