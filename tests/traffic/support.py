"""Helpers of the traffic tests: spans made by the OpenTelemetry SDK, written as OTLP JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


def retriever_span(
    kind: str,
    query: str | None,
    *,
    ids: Sequence[Any] = (),
    scores: Sequence[Any] = (),
    top_k: int | str | None = None,
    query_id: str | None = None,
) -> ReadableSpan:
    """One finished span made with the SDK: an OpenInference RETRIEVER span (``openinference``),
    a GenAI ``retrieval`` span (``genai``), or a span of another kind (``other``)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("tests.traffic")
    attrs: dict[str, Any] = {}
    if kind == "openinference":
        attrs["openinference.span.kind"] = "RETRIEVER"
        if query is not None:
            attrs["input.value"] = query
        for i, doc in enumerate(ids):
            attrs[f"retrieval.documents.{i}.document.id"] = doc
            if i < len(scores):
                attrs[f"retrieval.documents.{i}.document.score"] = scores[i]
        if query_id is not None:
            attrs["metadata"] = json.dumps({"query_id": query_id})
    elif kind == "genai":
        attrs["gen_ai.operation.name"] = "retrieval"
        attrs["gen_ai.data_source.id"] = "docs"
        if query is not None:
            attrs["gen_ai.retrieval.query.text"] = query
        if ids:
            docs = [{"id": d, "score": s} for d, s in zip(ids, scores, strict=False)]
            attrs["gen_ai.retrieval.documents"] = json.dumps(docs)
        if top_k is not None:
            attrs["gen_ai.retrieval.top_k"] = top_k
    else:
        attrs["gen_ai.operation.name"] = "chat"
        attrs["input.value"] = query or ""
    with tracer.start_as_current_span(f"{kind} span", attributes=attrs):
        pass
    provider.shutdown()
    return exporter.get_finished_spans()[0]


def otlp_json_lines(spans: Sequence[ReadableSpan], per_line: int | None = None) -> str:
    """``spans`` as OTLP JSON: one ``ExportTraceServiceRequest`` a line (``per_line`` spans
    each; all in one by default), encoded by the SDK's OTLP encoder and protobuf's printer."""
    from google.protobuf.json_format import MessageToJson
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    size = per_line or max(1, len(spans))
    lines = []
    for start in range(0, len(spans), size):
        request = encode_spans(spans[start : start + size])
        lines.append(json.dumps(json.loads(MessageToJson(request))) + "\n")
    return "".join(lines)
