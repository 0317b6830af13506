"""OTLP JSON traces: the retrieval spans in them, as queries.

Two conventions mark a retrieval span, and both are read:

* OpenInference (Phoenix; the LangChain, LlamaIndex and Haystack instrumentations):
  ``openinference.span.kind = RETRIEVER``, the query in ``input.value``, the returned documents
  in ``retrieval.documents.{i}.document.{id, score, content, metadata}``;
* OpenTelemetry's GenAI conventions: ``gen_ai.operation.name = retrieval``, the query (opt-in)
  in ``gen_ai.retrieval.query.text``, the documents (opt-in) in ``gen_ai.retrieval.documents``
  (``[{id, score}]``), ``gen_ai.retrieval.top_k`` and ``gen_ai.data_source.id``.

A file is OTLP JSON requests one a line (the Collector's file exporter), or one request
document. Spans of other kinds are counted (``other_spans``) and skipped; a retrieval span
without query text is counted (``no_query_text``); a line that is not JSON (a file cut short) is
counted (``malformed``) and the lines before and after it are still read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from itertools import chain
from pathlib import Path
from typing import Any

from ragsonde.inputs import MAX_DOCUMENT_BYTES, joined, size_text
from ragsonde.models.text import invalid_unicode_at
from ragsonde.traffic.formats import bad_file, numbered_lines
from ragsonde.traffic.logs import (
    RowError,
    number,
    optional_text,
    parse_time,
    production_of,
    returned_id,
)
from ragsonde.traffic.records import ReadStats, TrafficQuery

__all__ = ["attributes", "read_otlp", "retrieval_query"]

_KIND = "openinference.span.kind"
_TOP_K = "ragsonde.search.top_k"
_THRESHOLD = "ragsonde.search.score_threshold"
_DOC = "retrieval.documents."


def _value(v: Any) -> Any:
    """An OTLP ``AnyValue`` (JSON form) as a plain value."""
    if not isinstance(v, dict):
        return v
    for key in ("stringValue", "string_value", "boolValue", "bool_value", "doubleValue"):
        if key in v:
            return v[key]
    for key in ("intValue", "int_value", "double_value"):
        if key in v:
            return _number(v[key])
    array = v.get("arrayValue", v.get("array_value"))
    if isinstance(array, dict):
        return [_value(x) for x in array.get("values", [])]
    kvlist = v.get("kvlistValue", v.get("kvlist_value"))
    if isinstance(kvlist, dict):
        return attributes(kvlist.get("values", []))
    return None


def _number(raw: Any) -> Any:
    """An int64 (OTLP JSON writes it as a string) or a double as a number; a value that is
    none is kept as it is, for the field that reads it to refuse (:func:`number`): ``int()`` on
    it ended the whole read, even in a span that is not a retrieval."""
    if isinstance(raw, str):
        try:
            return int(raw)
        except ValueError:
            try:
                return float(raw)
            except ValueError:
                return raw
    return raw


def attributes(items: Any) -> dict[str, Any]:
    """OTLP ``[{key, value}]`` attributes as a dict."""
    if not isinstance(items, list):
        return {}
    return {
        str(a["key"]): _value(a.get("value")) for a in items if isinstance(a, dict) and "key" in a
    }


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return None
    return value


def _documents(attrs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The returned documents as ``{id, score, metadata}``, best first; a RowError when the
    GenAI documents attribute is there but no JSON list (it was read as no documents, and the
    span's production answer lost without a count)."""
    given = attrs.get("gen_ai.retrieval.documents")
    genai = _json(given)
    if given is not None and not isinstance(genai, list):
        raise RowError("its gen_ai.retrieval.documents is not a JSON list of {id, score}")
    if isinstance(genai, list):
        return [d for d in genai if isinstance(d, dict)]
    docs: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(_DOC):
            continue
        index, _, field = key[len(_DOC) :].partition(".document.")
        if index.isdigit() and field:
            docs.setdefault(int(index), {})[field] = value
    return [docs[i] for i in sorted(docs)]


def _doc_id(doc: Mapping[str, Any], i: int) -> str | None:
    """The ``i``-th returned document's id (its own, else its metadata's ``_id``, ``id`` or
    ``chunk_id``); a RowError when it is no id (a list, an object)."""
    if doc.get("id") not in (None, ""):
        return returned_id(doc["id"], f"document {i}'s id")
    meta = _json(doc.get("metadata"))
    if isinstance(meta, dict):
        for key in ("_id", "id", "chunk_id"):
            if meta.get(key) not in (None, ""):
                return returned_id(meta[key], f"document {i}'s metadata {key}")
    return None


def _collection(attrs: Mapping[str, Any], docs: list[dict[str, Any]]) -> Any:
    for key in ("gen_ai.data_source.id", "db.collection.name", "ragsonde.collection"):
        if attrs.get(key):
            return attrs[key]
    for doc in docs:
        meta = _json(doc.get("metadata"))
        if isinstance(meta, dict) and meta.get("_collection_name"):
            return meta["_collection_name"]
    return None


def _query_text(attrs: Mapping[str, Any]) -> Any:
    text = attrs.get("gen_ai.retrieval.query.text")
    if text is None:
        text = attrs.get("input.value")
        if attrs.get("input.mime_type") == "application/json":
            parsed = _json(text)
            if isinstance(parsed, dict):
                text = next((parsed[k] for k in ("query", "input", "text") if k in parsed), None)
    return text


def retrieval_query(span: Mapping[str, Any], stats: ReadStats, where: str) -> TrafficQuery | None:
    """The query of one span, None for a span that is not a retrieval (counted in ``stats``)."""
    attrs = attributes(span.get("attributes"))
    is_retrieval = (
        str(attrs.get(_KIND, "")).upper() == "RETRIEVER"
        or attrs.get("gen_ai.operation.name") == "retrieval"
    )
    if not is_retrieval:
        stats.other_spans += 1
        return None
    text = _query_text(attrs)
    if not isinstance(text, str) or not text.strip():
        stats.skip(
            "no_query_text",
            where,
            "a retrieval span without query text (recorded only on opt-in: "
            "RAGSONDE_TRACE_CONTENT=1 for ragsonde's spans, OpenInference's unless "
            "OPENINFERENCE_HIDE_INPUTS is set)",
        )
        return None
    if invalid_unicode_at(text) is not None:
        stats.skip("malformed", where, "its query is not valid Unicode text")
        return None
    meta = _json(attrs.get("metadata"))
    meta = meta if isinstance(meta, dict) else {}
    try:
        docs = _documents(attrs)
        qid = optional_text(meta.get("query_id", attrs.get("ragsonde.query_id")), "query_id")
        session = optional_text(meta.get("session"), "session")
        # each returned document with an id, and its score (a document without one is not
        # production's answer we can compare; its score would misalign the rest)
        found = [
            (_doc_id(d, i), number(d.get("score"), float, f"document {i}'s score"))
            for i, d in enumerate(docs)
        ]
        returned = [(doc_id, score) for doc_id, score in found if doc_id is not None]
        scores = [score for _, score in returned]
        production = production_of(
            [doc_id for doc_id, _ in returned],
            scores if all(v is not None for v in scores) else None,
            top_k=attrs.get("gen_ai.retrieval.top_k", attrs.get(_TOP_K)),
            threshold=attrs.get(_THRESHOLD),
            collection=_collection(attrs, docs),
            mode=attrs.get("ragsonde.search.mode"),
        )
        start = number(
            span.get("startTimeUnixNano", span.get("start_time_unix_nano")), int, "start time"
        )
        first_seen = parse_time(start) if start else None
    except RowError as e:
        stats.skip("malformed", where, str(e))
        return None
    return TrafficQuery(
        query=text.strip(),
        query_id=qid or "",
        first_seen=first_seen,
        session=session,
        production=production if docs or production.top_k is not None else None,
        source=where,
    )


def _listed(value: Any, name: str, where: str, stats: ReadStats) -> list[Any]:
    """An OTLP list field; another value is counted malformed (iterating ``7`` was a
    TypeError that ended the read)."""
    if value is None or isinstance(value, list):
        return value or []
    stats.skip("malformed", where, f"its {name} is {type(value).__name__}, not a list")
    return []


def _spans(request: Mapping[str, Any], where: str, stats: ReadStats) -> Iterator[Mapping[str, Any]]:
    resources = request.get("resourceSpans", request.get("resource_spans"))
    for resource in _listed(resources, "resourceSpans", where, stats):
        if not isinstance(resource, dict):
            continue
        scopes = resource.get("scopeSpans", resource.get("scope_spans"))
        if scopes is None:  # OTLP before 1.0
            scopes = resource.get("instrumentationLibrarySpans")
        for scope in _listed(scopes, "scopeSpans", where, stats):
            if isinstance(scope, dict):
                spans = _listed(scope.get("spans"), "spans", where, stats)
                yield from (s for s in spans if isinstance(s, dict))


def _requests(path: Path, stats: ReadStats) -> Iterator[tuple[str, Any]]:
    """Each OTLP request of the file with where it is; a line that is not JSON is counted."""
    lines = numbered_lines(path)
    pending: list[str] = []
    for n, line in lines:
        if not line.strip():
            continue
        try:
            yield f"{path.name}:{n}", json.loads(line)
            continue
        except RecursionError:
            stats.skip("malformed", f"{path.name}:{n}", "JSON nested too deeply to read")
            continue
        except json.JSONDecodeError as e:
            if n > 1 or pending:
                stats.skip("malformed", f"{path.name}:{n}", f"not JSON ({e.msg})")
                continue
        pending.append(line)  # line 1 is not JSON alone: the file is one document
        break
    if not pending:
        return
    try:  # one document is read whole: bounded, as a JSON document is
        text = joined(chain(pending, (line for _, line in lines)))
    except ValueError as e:
        lines.close()
        raise bad_file(
            path,
            f"it is one OTLP JSON document larger than {size_text(MAX_DOCUMENT_BYTES)}, "
            "the most ragsonde reads whole; write one request a line (JSON Lines)",
        ) from e
    try:
        request = json.loads(text)
    except RecursionError as e:
        raise bad_file(path, "its OTLP JSON nests too deeply to read") from e
    except json.JSONDecodeError as e:
        raise bad_file(
            path, f"its OTLP JSON ends or breaks at line {e.lineno}, column {e.colno} ({e.msg})"
        ) from e
    yield path.name, request


def read_otlp(path: Path, stats: ReadStats) -> Iterator[TrafficQuery]:
    """Every retrieval span of an OTLP JSON file, as a query."""
    for where, request in _requests(path, stats):
        if not isinstance(request, dict):
            stats.skip("malformed", where, "not an OTLP request object")
            continue
        for span in _spans(request, where, stats):
            span_id = span.get("spanId", span.get("span_id", "?"))
            span_where = f"{where} span {span_id if isinstance(span_id, str) else '?'}"
            found = retrieval_query(span, stats, span_where)
            if found is not None:
                yield found
