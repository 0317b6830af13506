"""Metrics per segment: does search work inside each filter, each section, each part of the site?

Two groupings of the same per-query results (no query is run twice, and each query runs as the
benchmark gives it, with its own filters):

* **By filter.** A query that carries ``filters`` is in the group its filters name
  (``category=sensors``; several keys joined by ``, ``, any-of values by ``|``); the others are
  ``(no filter)``. Reported when at least one query has filters.
* **By a payload field** (``--by FIELD``). A query is in the group of FIELD's value on its most
  relevant item: the relevant id with the highest grade (the first listed among equals), and for
  a document or url its first chunk (lowest ``chunk_index``), so a document-level field such as
  ``category`` or ``url`` is the document's value and ``section`` is its top heading. FIELD is a
  contract field (``url``, ``title``, ``section``, read through the payload mapping) or a
  payload path (``category``, ``metadata.lang``). ``FIELD:DEPTH`` keeps the first DEPTH levels of
  a hierarchical value: a URL's host and first DEPTH path segments (``url:1`` ->
  ``https://docs.example.com/sensors``), a heading path's first DEPTH headings
  (``section:1``), a ``/`` path's first DEPTH parts. Queries whose most relevant item is not in
  the collection are ``(not in collection)``; items without the field, ``(no value)``.

Each group gives its number of queries, the mean of every metric over them (so the overall mean
is the query-weighted mean of the groups), how many returned nothing, and how many returned
chunks break their query's filters (the integrity check, per group). Only labelled queries are
grouped: an unlabelled row an estimate keeps has no metric, and counting it as 0 would drag its
group's means down.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlparse

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.datasets import BenchQuery
from ragsonde.evaluate.gates import parse_gate
from ragsonde.evaluate.report import (
    Breakdown,
    FieldBreakdown,
    FilterBreakdown,
    GateResult,
    GroupSummary,
    QueryRow,
)
from ragsonde.evaluate.resolve import id_values
from ragsonde.models.payload import CONTRACT_FIELDS, DEFAULT_MAPPING, get_path
from ragsonde.models.store import Store
from ragsonde.models.unread import id_text

__all__ = [
    "BY_RULE",
    "NOT_IN_COLLECTION",
    "NO_FILTER",
    "NO_VALUE",
    "build_breakdown",
    "filter_label",
    "group_by_field",
    "headline_metrics",
    "parse_by",
    "summarize_groups",
]

NO_FILTER = "(no filter)"
NO_VALUE = "(no value)"
NOT_IN_COLLECTION = "(not in collection)"
_BATCH = 256
_HEADLINE = ("ndcg", "recall", "hit_rate")

BY_RULE = (
    "each query counts in the group of the field's value on its most relevant item (for a "
    "document or url, its first chunk)"
)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def filter_label(filters: Mapping[str, Any] | None) -> str:
    """``{"category": "sensors", "section": ["a", "b"]}`` -> ``category=sensors, section=a|b``."""
    if not filters:
        return NO_FILTER
    parts = []
    for key in sorted(filters):
        value = filters[key]
        values = value if isinstance(value, list) else [value]
        parts.append(f"{key}={'|'.join(_text(v) for v in values)}")
    return ", ".join(parts)


def parse_by(by: str) -> tuple[str, int | None]:
    """``"url:1"`` -> ``("url", 1)``; ``"category"`` -> ``("category", None)``."""
    field, sep, depth = by.strip().partition(":")
    field = field.strip()
    if not field or (sep and not depth.strip().isdigit()) or (sep and int(depth) < 1):
        raise QueryValidationError(
            f"{by!r} is not a field: give a payload field, optionally with a depth: 'category', "
            "'section', 'url:1' (a url up to its first path segment).",
            field="by",
        )
    return field, int(depth) if sep else None


def _truncate(value: str, depth: int | None) -> str:
    if depth is None:
        return value
    parsed = urlparse(value)
    if parsed.scheme and parsed.netloc:
        parts = [p for p in parsed.path.split("/") if p][:depth]
        return f"{parsed.scheme}://{parsed.netloc}/" + "/".join(parts)
    if " > " in value:
        return " > ".join(value.split(" > ")[:depth])
    lead = "/" if value.startswith("/") else ""
    return lead + "/".join([p for p in value.split("/") if p][:depth])


def _read(payload: Mapping[str, Any], field: str) -> Any:
    paths = DEFAULT_MAPPING.paths.get(field, ()) if field in CONTRACT_FIELDS else ()
    for path in (field, *paths):
        value = get_path(payload, path)
        if value is not None:
            return value
    return None


def _chunk_index(payload: Mapping[str, Any]) -> int:
    value = _read(payload, "chunk_index")
    return value if isinstance(value, int) else 1 << 62


def _primary(relevant: Mapping[str, int]) -> str:
    best = max(relevant.values())
    return next(r for r, grade in relevant.items() if grade == best)


def group_by_field(
    store: Store,
    collection: str,
    queries: Sequence[BenchQuery],
    relevance_field: str | None,
    by: str,
) -> dict[str, str]:
    """Query id -> its group under ``--by`` (see the module docstring for the rule).

    ``relevance_field`` is the payload field the relevant ids name (``doc_id``, ``url``), or
    ``None`` when they are chunk (point) ids. A field that no relevant chunk has is a
    VALIDATION_ERROR that lists the fields they do have.
    """
    field, depth = parse_by(by)
    primary = {q.query_id: _primary(q.relevant) for q in queries if q.relevant}
    wanted = sorted(set(primary.values()))
    first: dict[str, Mapping[str, Any]] = {}
    if relevance_field is None:
        first = {rec.id: rec.payload for rec in store.retrieve(collection, wanted)}
    else:
        for i in range(0, len(wanted), _BATCH):
            spec = {relevance_field: id_values(wanted[i : i + _BATCH])}
            for batch in store.scroll(collection, filter=spec):
                for rec in batch:  # a nested path (LangChain's metadata.doc_id) is read as one
                    key = id_text(get_path(rec.payload, relevance_field))  # a list is no id
                    if key is None:
                        continue
                    if key not in first or _chunk_index(rec.payload) < _chunk_index(first[key]):
                        first[key] = rec.payload
    values = {k: _read(p, field) for k, p in first.items()}
    if first and all(v is None for v in values.values()):
        seen = sorted({k for p in first.values() for k in p if k not in {"text", "embed_hash"}})
        raise QueryValidationError(
            f"by {field}: no relevant chunk in '{collection}' has a payload field '{field}'. "
            f"Fields they have: {', '.join(seen)}.",
            field="by",
        )
    groups: dict[str, str] = {}
    for q in queries:
        item = primary.get(q.query_id)
        if item is None or item not in first:
            groups[q.query_id] = NOT_IN_COLLECTION
            continue
        value = values[item]
        if value is None:
            groups[q.query_id] = NO_VALUE
        elif isinstance(value, list):
            groups[q.query_id] = "|".join(sorted(_truncate(_text(v), depth) for v in value))
        else:
            groups[q.query_id] = _truncate(_text(value), depth)
    return groups


def _order(label: str) -> tuple[bool, str]:
    return label.startswith("("), label


def summarize_groups(
    groups: Mapping[str, str], per_query: Mapping[str, QueryRow]
) -> dict[str, GroupSummary]:
    """Group label -> its summary, from the report's per-query rows."""
    members: dict[str, list[str]] = {}
    for qid, label in groups.items():
        members.setdefault(label, []).append(qid)
    out: dict[str, GroupSummary] = {}
    for label in sorted(members, key=_order):
        rows = [per_query[q] for q in members[label]]
        names = list(dict.fromkeys(n for r in rows for n in r.metrics))
        out[label] = GroupSummary(
            queries=len(rows),
            metrics={
                n: round(sum(r.metrics.get(n, 0.0) for r in rows) / len(rows), 6) for n in names
            },
            empty_results=sum(1 for r in rows if not r.retrieved),
            filter_violations=sum(r.filter_violations or 0 for r in rows),
            query_ids=members[label],
        )
    return out


def build_breakdown(
    queries: Sequence[BenchQuery],
    per_query: Mapping[str, QueryRow],
    by: str | None = None,
    by_groups: Mapping[str, str] | None = None,
) -> Breakdown | None:
    """The report's ``breakdown`` (by filter, by field), or ``None`` when neither applies."""
    labelled = [q for q in queries if q.relevant]  # an estimate's unlabelled rows: no metric
    filters = None
    if any(q.filters for q in labelled):
        groups = {q.query_id: filter_label(q.filters) for q in labelled}
        filters = FilterBreakdown(groups=summarize_groups(groups, per_query))
    by_part = None
    if by is not None and by_groups is not None:
        field, depth = parse_by(by)
        kept = {q.query_id: by_groups[q.query_id] for q in labelled if q.query_id in by_groups}
        by_part = FieldBreakdown(
            field=field, depth=depth, rule=BY_RULE, groups=summarize_groups(kept, per_query)
        )
    if filters is None and by_part is None:
        return None
    return Breakdown(filters=filters, by=by_part)


def headline_metrics(metrics: Mapping[str, float], gates: Sequence[GateResult] = ()) -> list[str]:
    """The few metrics a breakdown table shows: the gated ones (``gates`` as in the report), then
    nDCG, recall and hit rate at 10 (or the deepest cutoff there is) unless one of the family is
    gated, then uncut MRR."""
    paths = [parse_gate(g.gate).path for g in gates]
    chosen = [p for p in paths if p in metrics]
    for family in _HEADLINE:
        if any(c.startswith(f"{family}@") for c in chosen):
            continue
        if f"{family}@10" in metrics:
            chosen.append(f"{family}@10")
            continue
        cut = [n for n in metrics if n.startswith(f"{family}@")]
        if cut:
            chosen.append(max(cut, key=lambda n: int(n.split("@")[1])))
    if "mrr" in metrics:
        chosen.append("mrr")
    return list(dict.fromkeys(chosen))
