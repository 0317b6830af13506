"""Every retrieval as an OpenTelemetry GenAI ``retrieval`` span (optional: ``ragsonde[trace]``).

A retrieval (library, CLI, server) becomes one span ``retrieval {collection}`` with
``gen_ai.operation.name = retrieval``, ``gen_ai.data_source.id``, ``gen_ai.retrieval.top_k`` and
ragsonde's effective search parameters (``ragsonde.search.*``), and three children carrying
ragsonde's own stage timings: ``embeddings {model}``, ``search {collection}`` (the parameters
again) and ``post_processing``. The query text (``gen_ai.retrieval.query.text``) and the returned
documents (``gen_ai.retrieval.documents``, ``[{id, score}]``) are recorded only on opt-in, as the
convention says: ``RAGSONDE_TRACE_CONTENT=1`` or
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true``.

Nothing happens unless an OpenTelemetry SDK is configured: by the application (any tracer
provider set globally), or by ragsonde from the standard ``OTEL_TRACES_EXPORTER`` variable
(``console``, on stderr so that stdout keeps the command's output; or ``otlp``, which reads its
own ``OTEL_EXPORTER_OTLP_*`` variables). Without
``opentelemetry`` loaded and without that variable, a retrieval costs one dictionary lookup.

``ragsonde traffic`` reads these spans back as OTLP JSON (:mod:`ragsonde.traffic.otlp`; e.g. a
Collector's file exporter), not the console exporter's own JSON.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragsonde.models import Response

__all__ = [
    "active",
    "capture_content",
    "configure_from_environment",
    "trace_retrieval",
    "use_provider",
]

_INSTRUMENTATION = "ragsonde"
_CONTENT_VARS = ("RAGSONDE_TRACE_CONTENT", "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")
_lock = threading.Lock()
_state: dict[str, Any] = {"provider": None, "configured": False}


def use_provider(provider: Any) -> None:
    """Trace to ``provider`` (an SDK ``TracerProvider``) instead of the global one; ``None``
    goes back to the global provider. For applications and tests that keep their own."""
    _state["provider"] = provider


def capture_content() -> bool:
    """Whether the user opted in to recording query text and documents."""
    return any(os.environ.get(v, "").strip().lower() in ("1", "true", "yes") for v in _CONTENT_VARS)


def configure_from_environment() -> bool:
    """Set a global SDK tracer provider from ``OTEL_TRACES_EXPORTER`` (``console`` or
    ``otlp``), once, unless one is set already. Returns whether ragsonde configured one."""
    exporter_name = os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if _state["configured"] or exporter_name in ("", "none"):
        return False
    with _lock:
        if _state["configured"]:
            return False
        _state["configured"] = True
        from opentelemetry import trace

        if not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
            return False  # the application configured its own
        names = [n.strip() for n in exporter_name.split(",") if n.strip()]  # a list, per spec
        unknown = [n for n in names if n not in ("console", "otlp", "none")]
        if unknown:
            _not_traced(f"to {', '.join(unknown)}: ragsonde sets up console and otlp only")
        if "otlp" not in names and "console" not in names:
            return False
        try:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
        except ImportError:  # the API alone: spans are no-ops, as the convention wants
            return _not_traced(  # 'ragsonde[trace]' brings the API alone: it sent users there
                "the OpenTelemetry SDK is not installed: pip install opentelemetry-sdk "
                "(ragsonde[trace] brings only the API)"
            )
        exporter: Any
        if "otlp" not in names:
            # on stderr: stdout carries the command's own output (``--json``, a report)
            exporter = ConsoleSpanExporter(out=sys.stderr)
        else:
            try:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[import-not-found,unused-ignore]
                    OTLPSpanExporter,
                )
            except ImportError:
                return _not_traced(
                    "the OTLP exporter is not installed: pip install "
                    "opentelemetry-exporter-otlp-proto-http"
                )
            exporter = OTLPSpanExporter()
        service = os.environ.get("OTEL_SERVICE_NAME", "ragsonde")
        provider = TracerProvider(resource=Resource.create({"service.name": service}))
        provider.add_span_processor(BatchSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        return True


def _not_traced(why: str) -> bool:
    """Tracing was asked for (``OTEL_TRACES_EXPORTER``) and cannot be set up (wholly, or to
    one of the exporters named): said as a warning, never a silent run without the spans."""
    logging.getLogger("ragsonde.tracing").warning("No traces will be exported: %s.", why)
    return False


def _tracer() -> Any:
    provider = _state["provider"]
    if provider is not None:
        return provider.get_tracer(_INSTRUMENTATION)
    if "opentelemetry.trace" not in sys.modules and not os.environ.get("OTEL_TRACES_EXPORTER"):
        return None  # no SDK can be configured: nothing to do
    try:
        from opentelemetry import trace
    except ImportError:
        exporter = os.environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
        if exporter not in ("", "none") and not _state["configured"]:
            _state["configured"] = True  # said once
            _not_traced(
                f"OTEL_TRACES_EXPORTER={exporter} is set, and OpenTelemetry is not installed: "
                "pip install 'ragsonde[trace]' opentelemetry-sdk"
            )
        return None
    configure_from_environment()
    return trace.get_tracer(_INSTRUMENTATION)


def active() -> bool:
    """Whether retrievals are traced (an SDK is configured, or may be from the environment)."""
    return _tracer() is not None


def _search_attributes(response: Response) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if response.search is not None:
        for key, value in response.search.model_dump(mode="json").items():
            if value is None:
                continue
            out[f"ragsonde.search.{key}"] = (
                value if isinstance(value, bool | int | float | str) else json.dumps(value)
            )
    return out


def trace_retrieval(response: Response, started_ns: int, *, model: str = "") -> None:
    """Record ``response`` as a retrieval span started at ``started_ns`` (``time.time_ns()``),
    with its stage timings as child spans. A no-op when no SDK is configured."""
    tracer = _tracer()
    if tracer is None:
        return
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind, Status, StatusCode

    t = response.timings
    ms = 1_000_000
    embed_end = started_ns + int(t.embedding_ms * ms)
    search_end = embed_end + int(t.search_ms * ms)
    post_end = search_end + int(t.post_processing_ms * ms)
    end = max(started_ns + int(t.total_ms * ms), post_end)
    search = _search_attributes(response)
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "retrieval",
        "gen_ai.data_source.id": response.collection,
        "gen_ai.retrieval.top_k": response.top_k_requested,
        "gen_ai.request.model": response.model,
        "ragsonde.query_id": response.query_id,
        "ragsonde.results": response.total_results,
        "ragsonde.timings.embedding_ms": t.embedding_ms,
        "ragsonde.timings.search_ms": t.search_ms,
        "ragsonde.timings.post_processing_ms": t.post_processing_ms,
        "ragsonde.timings.total_ms": t.total_ms,
        **search,
    }
    if capture_content():
        attributes["gen_ai.retrieval.query.text"] = response.query
        attributes["gen_ai.retrieval.documents"] = json.dumps(
            [{"id": r.chunk_id, "score": r.similarity_score} for r in response.results]
        )
    span = tracer.start_span(
        f"retrieval {response.collection}",
        kind=SpanKind.CLIENT,
        start_time=started_ns,
        attributes=attributes,
    )
    if not span.is_recording():
        return
    if response.error is not None:
        span.set_attribute("error.type", response.error.code.value)
        span.set_status(Status(StatusCode.ERROR, response.error.message))
    context = trace.set_span_in_context(span)
    children: list[tuple[str, int, int, Mapping[str, Any]]] = [
        (
            f"embeddings {model or response.model}",
            started_ns,
            embed_end,
            {"gen_ai.operation.name": "embeddings", "gen_ai.request.model": response.model},
        ),
        (f"search {response.collection}", embed_end, search_end, search),
        ("post_processing", search_end, post_end, {"ragsonde.results": response.total_results}),
    ]
    for name, start, stop, attrs in children:
        child = tracer.start_span(name, context=context, start_time=start, attributes=attrs)
        child.end(end_time=stop)
    span.end(end_time=end)
