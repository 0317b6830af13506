"""How a search tool's answer becomes a ranking: where its items are, and which field of an item
is the id, the score, the text, the url.

Named by flags (``--map items=results --map id=doc_id``), else read off the tool's output schema,
else off the first answer, by the usual names (:data:`CANDIDATES`). An item with no id is
matched to a document by its exact text or its url (:class:`Matcher`). Output that does not fit
is a VALIDATION_ERROR naming the query and the item that failed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ragsonde.errors import QueryValidationError
from ragsonde.models.payload import get_path

__all__ = ["CANDIDATES", "ItemMap", "Matcher", "items_of", "map_from_schema", "ranked"]

MapKey = Literal["items", "id", "score", "text", "url"]
#: The usual names of each field, tried in order.
CANDIDATES: dict[str, tuple[str, ...]] = {
    "items": ("results", "items", "documents", "hits", "chunks", "matches", "result"),
    "id": ("doc_id", "document_id", "docid", "id", "chunk_id", "metadata.doc_id"),
    "score": ("score", "similarity_score", "relevance_score", "similarity", "relevance"),
    "text": ("text", "content", "page_content", "snippet", "chunk"),
    "url": ("url", "source", "uri", "link", "metadata.url", "metadata.source"),
}
MAP_KEYS: tuple[MapKey, ...] = ("items", "id", "score", "text", "url")


@dataclass
class ItemMap:
    """Where the items are and what each field is called; ``how``: what names a document
    (``id``, else ``url``, else ``text``) and why (for the report)."""

    items: str | None = None
    id: str | None = None
    score: str | None = None
    text: str | None = None
    url: str | None = None
    source: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of_flags(cls, pairs: Mapping[str, str]) -> ItemMap:
        unknown = sorted(set(pairs) - set(MAP_KEYS))
        if unknown:
            raise QueryValidationError(
                f"map: unknown key(s) {', '.join(unknown)}; name {', '.join(MAP_KEYS)} "
                "(e.g. --map id=doc_id).",
                field="map",
            )
        found = cls(
            items=pairs.get("items"),
            id=pairs.get("id"),
            score=pairs.get("score"),
            text=pairs.get("text"),
            url=pairs.get("url"),
        )
        found.source = {k: "--map" for k in pairs}
        return found

    @property
    def how(self) -> Literal["id", "url", "text"]:
        if self.id is not None:
            return "id"
        if self.url is not None:
            return "url"
        if self.text is not None:
            return "text"
        raise QueryValidationError(
            "map: the tool's items have no id, url or text field this can read; name one "
            "with --map id=FIELD (or url=FIELD, text=FIELD).",
            field="map",
        )

    def fill(self, names: Sequence[str], where: str) -> None:
        """Each unset field from the usual names among ``names`` (an item's keys, dotted)."""
        for key in ("id", "score", "text", "url"):
            if getattr(self, key) is None:
                hit = next((c for c in CANDIDATES[key] if c in names), None)
                if hit is not None:
                    setattr(self, key, hit)
                    self.source[key] = where

    def describe(self) -> str:
        parts = [f"{k}={getattr(self, k)}" for k in MAP_KEYS if getattr(self, k) is not None]
        origin = sorted(set(self.source.values()))
        return f"{', '.join(parts)} (from {', '.join(origin) or 'defaults'})"


def _resolve(schema: Mapping[str, Any], node: Any) -> Any:
    """``node`` with a local ``$ref`` followed (one level at a time)."""
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str):
        name = node["$ref"].rsplit("/", 1)[-1]
        node = schema.get("$defs", {}).get(name, {})
    return node


def _keys(schema: Mapping[str, Any], node: Any, prefix: str = "", depth: int = 0) -> list[str]:
    node = _resolve(schema, node)
    out: list[str] = []
    if not isinstance(node, Mapping) or depth > 2:
        return out
    for name, sub in (node.get("properties") or {}).items():
        out.append(prefix + name)
        out += _keys(schema, sub, f"{prefix}{name}.", depth + 1)
    return out


def map_from_schema(given: ItemMap, schema: Mapping[str, Any] | None) -> ItemMap:
    """``given`` with what it leaves unset read off the tool's output schema."""
    if not schema:
        return given
    props = schema.get("properties") or {}
    items_path = given.items
    if items_path is None:
        arrays = [n for n, p in props.items() if _resolve(schema, p).get("type") == "array"]
        items_path = next((c for c in CANDIDATES["items"] if c in arrays), None) or (
            arrays[0] if len(arrays) == 1 else None
        )
        if items_path is not None:
            given.items, given.source["items"] = items_path, "output schema"
    if items_path is not None and "." not in items_path and items_path in props:
        item = _resolve(schema, _resolve(schema, props[items_path]).get("items", {}))
        given.fill(_keys(schema, item), "output schema")
    return given


def _data(result: Any) -> Any:
    """The tool's answer: its structuredContent, else its first text block parsed as JSON."""
    if result.structured_content is not None:
        return result.structured_content
    for block in result.content:
        if getattr(block, "type", None) == "text":
            try:
                return json.loads(block.text)
            except ValueError:
                break
    raise QueryValidationError(
        "the tool answered neither structuredContent nor JSON text; name a tool that returns "
        "its results as data.",
        field="tool",
    )


def items_of(result: Any, m: ItemMap, query_id: str) -> list[Mapping[str, Any]]:
    """The list of items of one answer (``m.items`` set from the first answer if unset)."""
    data = _data(result)
    if m.items is None:
        if isinstance(data, list):
            m.items, m.source["items"] = "", "first answer"
        elif isinstance(data, Mapping):
            lists = [k for k, v in data.items() if isinstance(v, list)]
            hit = next((c for c in CANDIDATES["items"] if c in lists), None)
            m.items = hit or (lists[0] if len(lists) == 1 else None)
            m.source["items"] = "first answer"
    found = data if m.items == "" else get_path(data, m.items) if m.items else None
    if not isinstance(found, list):
        raise QueryValidationError(
            f"query {query_id}: the tool's answer has no list of items at "
            f"{m.items or '(none found)'!r}; name it with --map items=PATH.",
            field="map",
        )
    for n, item in enumerate(found):
        if not isinstance(item, Mapping):
            raise QueryValidationError(
                f"query {query_id}: item {n} of the tool's answer is {type(item).__name__}, "
                f"not an object: {json.dumps(item)[:120]}",
                field="map",
            )
    if found and m.id is None and m.url is None and m.text is None:
        first = found[0]
        names = [*first, *(f"metadata.{k}" for k in first.get("metadata") or {})]
        m.fill(names, "first answer")
    return list(found)


class Matcher:
    """Documents by their chunks' exact text and url, read from a collection: names an item
    that carries no id."""

    def __init__(self, by_text: dict[str, str], by_url: dict[str, str]) -> None:
        self.by_text = by_text
        self.by_url = by_url

    def name(self, how: str, value: Any) -> str | None:
        if not isinstance(value, str):
            return None
        table = self.by_url if how == "url" else self.by_text
        return table.get(value.strip())


def ranked(
    items: Sequence[Mapping[str, Any]], m: ItemMap, matcher: Matcher | None, query_id: str
) -> tuple[list[tuple[str, float]], int]:
    """``(id, score)`` best first, and how many items named no document. Scores missing: the
    rank stands in for them (n, n-1, …); a score that is not a number fails, naming the item."""
    how = m.how
    path = {"id": m.id, "url": m.url, "text": m.text}[how]
    assert path is not None  # how is the first field set
    out: list[tuple[str, float]] = []
    unmatched = 0
    for n, item in enumerate(items):
        value = get_path(item, path)
        if how == "id":
            if value is None or isinstance(value, bool) or not isinstance(value, str | int):
                raise QueryValidationError(
                    f"query {query_id}: item {n} has no usable id at {path!r} "
                    f"(got {json.dumps(value)[:80]}): {json.dumps(item, default=str)[:160]}",
                    field="map",
                )
            doc: str | None = str(value)
        else:
            doc = matcher.name(how, value) if matcher is not None else None
        score_raw = get_path(item, m.score) if m.score else None
        if score_raw is None:
            score = float(len(items) - n)
        elif isinstance(score_raw, int | float) and not isinstance(score_raw, bool):
            score = float(score_raw)
        else:
            raise QueryValidationError(
                f"query {query_id}: item {n} has a score at {m.score!r} that is not a number "
                f"({json.dumps(score_raw)[:80]}): {json.dumps(item, default=str)[:160]}",
                field="map",
            )
        if doc is None:
            unmatched += 1
        else:
            out.append((doc, score))
    return out, unmatched
