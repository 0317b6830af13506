"""Payload layouts and mappings: where a collection keeps each contract field.

Collections built by other pipelines name payload fields differently. A :class:`PayloadMapping`
lists, per field, the payload paths to try in order (first non-null wins). Paths are dotted
(``metadata.source`` reads ``payload["metadata"]["source"]``), and a step through a payload field
that holds a JSON object as a string is decoded (``_node_content.text`` reads LlamaIndex's
``_node_content``), once per payload.

:data:`LAYOUTS` names the layouts found in the wild, each with its own mapping and the top-level
keys that give it away; :func:`detect_layout` picks one from a sample of payloads. The
:data:`DEFAULT_MAPPING` tries every layout's paths, so a collection reads correctly with no
configuration; :func:`build_mapping` turns the ``mapping`` setting (``[mapping]`` in
``ragsonde.toml``, ``RAGSONDE_MAPPING__TEXT``, ``--field text=...``) into a mapping.

=========== ============================================= ==========================================
layout      marker keys                                   text / doc_id
=========== ============================================= ==========================================
llamaindex  ``_node_content`` (a JSON string)             ``_node_content.text`` / ``doc_id``
langchain   ``page_content``, ``metadata``                ``page_content`` / ``metadata.doc_id``
haystack    ``content``, ``meta``                         ``content`` / ``meta.doc_id``
ragsonde    ``text``, ``doc_id``, ``content_hash``        ``text`` / ``doc_id``
spec        ``text``                                      ``text`` / ``doc_id``
=========== ============================================= ==========================================
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragsonde.errors import QueryValidationError
from ragsonde.models.unread import text_of

__all__ = [
    "CONTRACT_FIELDS",
    "DEFAULT_MAPPING",
    "HAYSTACK_ID_NAMESPACE",
    "LAYOUTS",
    "MAPPED_FIELDS",
    "SPAN_FIELDS",
    "ChunkFields",
    "Layout",
    "LayoutMatch",
    "PayloadMapping",
    "build_mapping",
    "detect_layout",
    "detect_mapping",
    "get_path",
    "haystack_point_id",
]

#: The contract fields a payload maps onto (read into every result).
CONTRACT_FIELDS = ("text", "url", "title", "section", "chunk_index", "created_at")
#: A chunk's span in its source document's text (``str`` indices), read by span metrics.
SPAN_FIELDS = ("start", "end")
#: Every field a mapping names: the contract fields, the source document's id and the chunk's
#: span there (evaluation), and the hash of the text ingestion stored (the integrity checks).
MAPPED_FIELDS = (*CONTRACT_FIELDS, "doc_id", *SPAN_FIELDS, "content_hash")

#: Per-payload cache of decoded JSON strings: ``id(string) -> (string, decoded)``.
_Decoded = dict[int, tuple[str, Any]]


def get_path(payload: Mapping[str, Any], path: str) -> Any:
    """``payload["a"]["b"]`` for ``"a.b"`` (a JSON-string step decoded); ``None`` if missing."""
    return _get_parts(payload, path.split("."), None)


def _decode(node: str, cache: _Decoded | None) -> Any:
    """A JSON object stored as a string, decoded; ``None`` for any other string."""
    if not node.startswith("{"):
        return None
    if cache is not None:
        hit = cache.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
    try:
        value = json.loads(node)
    except (ValueError, RecursionError):  # not JSON; nested deeper than the parser goes
        value = None
    if cache is not None:
        cache[id(node)] = (node, value)
    return value


def _get_parts(payload: Mapping[str, Any], parts: Iterable[str], cache: _Decoded | None) -> Any:
    node: Any = payload
    for part in parts:
        # ``type is dict`` first: skips the ABC check in the usual case (hot: every result)
        if type(node) is dict:
            node = node.get(part)
        elif type(node) is str:  # a JSON object kept as a string (LlamaIndex's _node_content)
            decoded = _decode(node, cache)
            node = decoded.get(part) if type(decoded) is dict else None
        elif isinstance(node, Mapping):
            node = node.get(part)
        else:
            return None
        if node is None:
            return None
    return node


@dataclass(frozen=True)
class ChunkFields:
    """A payload read through a mapping."""

    text: str
    url: str | None
    title: str | None
    section: str | None
    chunk_index: int | None
    created_at: str | None
    metadata: dict[str, Any]
    unread: tuple[tuple[str, str, Any], ...] = ()
    """``(field, path, value)`` of each text field whose value has no one text (a list, an
    object, true/false): read as absent, the value left in ``metadata``
    (:mod:`ragsonde.models.unread`)."""


#: A candidate path split for reading: ``(path, first step, the steps after it)``, e.g.
#: ``("metadata.url", "metadata", ("url",))``; a flat path has no steps after the first.
_Step = tuple[str, str, tuple[str, ...]]


@dataclass(frozen=True)
class _Field:
    """One mapped field's candidate paths, split once: ``read`` runs for every result."""

    name: str
    steps: tuple[_Step, ...]
    paths: frozenset[str]

    @classmethod
    def of(cls, name: str, paths: tuple[str, ...]) -> _Field:
        steps = []
        for path in paths:
            head, *rest = path.split(".")
            steps.append((path, head, tuple(rest)))
        return cls(name, tuple(steps), frozenset(paths))

    def first(self, payload: Mapping[str, Any], cache: _Decoded) -> tuple[str, Any] | None:
        """The first candidate path ``payload`` has (non-null), and its value."""
        get = payload.get
        for path, head, rest in self.steps:
            # the first step inline: most paths are flat, or miss at their first step
            value = get(head)
            if value is not None and rest:
                value = _get_parts(value, rest, cache)
            if value is not None:
                return path, value
        return None


@dataclass(frozen=True)
class PayloadMapping:
    """Per field (:data:`MAPPED_FIELDS`), the payload paths to try, first found wins."""

    paths: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: _default_paths())

    _fields: dict[str, _Field] = field(init=False, repr=False, compare=False)
    _contract: tuple[_Field, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        fields = {name: _Field.of(name, tuple(self.paths.get(name, ()))) for name in MAPPED_FIELDS}
        object.__setattr__(self, "_fields", fields)
        object.__setattr__(self, "_contract", tuple(fields[name] for name in CONTRACT_FIELDS))

    def _field(self, name: str) -> _Field:
        known = self._fields.get(name)
        return known if known is not None else _Field.of(name, tuple(self.paths.get(name, ())))

    def with_overrides(self, overrides: Mapping[str, str]) -> PayloadMapping:
        """A mapping where each overridden field reads only the given path."""
        paths = dict(self.paths)
        for name, path in overrides.items():
            paths[name] = (path,)
        return PayloadMapping(paths)

    def path_for(self, name: str, payload: Mapping[str, Any]) -> str | None:
        """The first path for ``name`` that ``payload`` has (non-null)."""
        found = self._field(name).first(payload, {})
        return None if found is None else found[0]

    def value(self, name: str, payload: Mapping[str, Any]) -> Any:
        """The value of field ``name`` (e.g. ``doc_id``) in ``payload``, or ``None``."""
        found = self._field(name).first(payload, {})
        return None if found is None else found[1]

    def read(self, payload: Mapping[str, Any]) -> ChunkFields:
        """Read the contract fields; every other top-level field goes to ``metadata``.

        A text field holds text, or a number read as its decimal text; any other value (a list,
        an object, true/false) reads as absent and stays in ``metadata`` as stored, listed in
        ``unread`` (:mod:`ragsonde.models.unread`). A ``chunk_index`` that is not an integer
        ≥ 0 reads as null and stays in ``metadata`` too."""
        found: dict[str, Any] = {}
        used_top: set[str] = set()
        unread: list[tuple[str, str, Any]] = []
        cache: _Decoded = {}
        for mapped in self._contract:
            hit = mapped.first(payload, cache)
            if hit is None:  # a field stored as null is still that field, not metadata
                used_top.update(payload.keys() & mapped.paths)
                continue
            path, value = hit
            if mapped.name == "chunk_index":
                value = value if type(value) is int and value >= 0 else None
            elif type(value) is not str:
                text = text_of(value)
                if text is None:
                    unread.append((mapped.name, path, value))
                value = text
            if value is None:
                continue  # unread: left in metadata
            found[mapped.name] = value
            if "." not in path:
                used_top.add(path)
        return ChunkFields(
            text=found.get("text", ""),
            url=found.get("url"),
            title=found.get("title"),
            section=found.get("section"),
            chunk_index=found.get("chunk_index"),
            created_at=found.get("created_at"),
            metadata={k: v for k, v in payload.items() if k not in used_top},
            unread=tuple(unread),
        )


@dataclass(frozen=True)
class Layout:
    """A payload layout some pipeline writes: its name, what gives it away, how to read it."""

    name: str
    description: str
    markers: tuple[str, ...]
    """Top-level keys every payload of this layout has."""
    mapping: PayloadMapping
    point_id: Callable[[str], str] | None = None
    """How the pipeline derives a point's id from the id its retriever answers (and a trace or
    log carries), when they differ; ``None``: its retriever answers the point id."""

    def matches(self, payload: Mapping[str, Any]) -> bool:
        return all(key in payload for key in self.markers)


def _layout(
    name: str,
    description: str,
    markers: tuple[str, ...],
    point_id: Callable[[str], str] | None = None,
    **paths: str,
) -> Layout:
    """A layout whose mapping reads ``paths`` (comma-separated candidates per field)."""
    mapping = PayloadMapping(
        {f: tuple(p.strip() for p in paths[f].split(",")) for f in MAPPED_FIELDS if f in paths}
    )
    return Layout(name, description, markers, mapping, point_id)


#: The namespace in which Haystack's QdrantDocumentStore derives a point id from a document id
#: (``haystack_integrations.document_stores.qdrant.converters.convert_id``, a ``uuid5``).
HAYSTACK_ID_NAMESPACE = uuid.UUID("3896d314-1e95-4a3a-b45a-945f9f0b541d")


def haystack_point_id(document_id: str) -> str:
    """The Qdrant point id Haystack's QdrantDocumentStore gives the document ``document_id``:
    its retriever (and so its traces) answer the document id, the collection keeps the point."""
    return str(uuid.uuid5(HAYSTACK_ID_NAMESPACE, document_id))


#: The layouts in the wild, most specific first: :func:`detect_layout` keeps the first of equals.
LAYOUTS: dict[str, Layout] = {
    layout.name: layout
    for layout in (
        _layout(
            "llamaindex",
            "LlamaIndex QdrantVectorStore: the node as JSON in _node_content, metadata flat",
            ("_node_content",),
            text="_node_content.text",
            url="url, file_path, _node_content.metadata.url",
            title="title, file_name, _node_content.metadata.title",
            section="section, _node_content.metadata.section",
            chunk_index="chunk_index, _node_content.metadata.chunk_index",
            created_at="created_at, creation_date",
            doc_id="doc_id, ref_doc_id, document_id",
            start="start, start_char_idx, _node_content.start_char_idx",
            end="end, end_char_idx, _node_content.end_char_idx",
            content_hash="content_hash",
        ),
        _layout(
            "langchain",
            "LangChain QdrantVectorStore: page_content, and the metadata nested under metadata",
            ("page_content", "metadata"),
            text="page_content",
            url="metadata.url, metadata.source",
            title="metadata.title",
            section="metadata.section, metadata.heading",
            chunk_index="metadata.chunk_index, metadata.position",
            created_at="metadata.created_at",
            doc_id="metadata.doc_id, metadata.document_id, metadata.id, metadata.source",
            start="metadata.start, metadata.start_index",
            end="metadata.end",
            content_hash="metadata.content_hash",
        ),
        _layout(
            "haystack",
            "Haystack QdrantDocumentStore: content, and the metadata nested under meta",
            ("content", "meta"),
            point_id=haystack_point_id,
            text="content",
            url="meta.url, meta.source",
            title="meta.title",
            section="meta.section, meta.heading",
            chunk_index="meta.chunk_index, meta.split_id",
            created_at="meta.created_at",
            doc_id="meta.doc_id, meta.document_id, meta.source_id, meta.id",
            start="meta.start, meta.split_idx_start",
            end="meta.end",
            content_hash="meta.content_hash",
        ),
        _layout(
            "ragsonde",
            "ragsonde's own (ragsonde ingest): the specification's fields plus doc_id and hashes",
            ("text", "doc_id", "content_hash"),
            text="text",
            url="url",
            title="title",
            section="section",
            chunk_index="chunk_index",
            created_at="created_at",
            doc_id="doc_id",
            start="start",
            end="end",
            content_hash="content_hash",
        ),
        _layout(
            "spec",
            "the specification's pipeline: text, url, title, chunk_index at the top level",
            ("text",),
            text="text",
            url="url",
            title="title",
            section="section",
            chunk_index="chunk_index",
            created_at="created_at",
            doc_id="doc_id, document_id, source_id",
            start="start",
            end="end",
            content_hash="content_hash",
        ),
    )
}


def _default_paths() -> dict[str, tuple[str, ...]]:
    """Every layout's paths, the flat ones first, plus a few common names of our own."""
    extra = {
        "text": ("text", "content", "page_content", "document", "chunk_text"),
        "url": ("url", "source", "source_url", "metadata.url", "metadata.source"),
        "title": ("title", "page_title", "metadata.title"),
        "section": ("section", "heading", "metadata.section", "metadata.heading"),
        "chunk_index": (
            "chunk_index",
            "position",
            "chunk_id",
            "metadata.chunk_index",
            "metadata.position",
        ),
        "created_at": ("created_at", "timestamp", "indexed_at", "metadata.created_at"),
        "doc_id": ("doc_id", "document_id", "ref_doc_id", "source_id"),
        "start": ("start", "start_index", "start_char_idx"),
        "end": ("end", "end_index", "end_char_idx"),
        "content_hash": ("content_hash",),
    }
    out: dict[str, tuple[str, ...]] = {}
    for name in MAPPED_FIELDS:
        paths = list(extra[name])
        for layout in reversed(LAYOUTS.values()):  # spec, ragsonde, haystack, langchain, llama
            paths.extend(layout.mapping.paths.get(name, ()))
        # flat paths first: one dict lookup each, and a nested or JSON path only when they miss
        unique = list(dict.fromkeys(paths))
        out[name] = tuple(sorted(unique, key=lambda p: (p.count("."), unique.index(p))))
    return out


DEFAULT_MAPPING = PayloadMapping()


@dataclass(frozen=True)
class LayoutMatch:
    """The layout most sampled payloads have, and the share that have it."""

    name: str | None
    """``None`` when no known layout fits any payload."""
    share: float
    description: str = ""


def detect_layout(payloads: Iterable[Mapping[str, Any]]) -> LayoutMatch:
    """The known layout that most of ``payloads`` match (ties: the more specific)."""
    counts = dict.fromkeys(LAYOUTS, 0)
    total = 0
    for payload in payloads:
        total += 1
        for name, layout in LAYOUTS.items():
            if layout.matches(payload):
                counts[name] += 1
    best = max(LAYOUTS, key=lambda name: counts[name])  # max keeps the first of equals
    if total == 0 or counts[best] == 0:
        return LayoutMatch(None, 0.0)
    return LayoutMatch(best, counts[best] / total, LAYOUTS[best].description)


def detect_mapping(
    payloads: Iterable[Mapping[str, Any]], mapping: PayloadMapping = DEFAULT_MAPPING
) -> dict[str, tuple[str | None, float]]:
    """For each mapped field: the path most payloads use, and the share that have it."""
    counts: dict[str, dict[str, int]] = {name: {} for name in MAPPED_FIELDS}
    total = 0
    for payload in payloads:
        total += 1
        for name in MAPPED_FIELDS:
            path = mapping.path_for(name, payload)
            if path is not None:
                counts[name][path] = counts[name].get(path, 0) + 1
    out: dict[str, tuple[str | None, float]] = {}
    for name, by_path in counts.items():
        if not by_path or total == 0:
            out[name] = (None, 0.0)
        else:
            path, n = max(by_path.items(), key=lambda kv: kv[1])
            out[name] = (path, n / total)
    return out


def build_mapping(config: Mapping[str, str]) -> PayloadMapping:
    """The mapping a ``mapping`` setting describes: ``{"layout": "langchain", "doc_id":
    "metadata.source"}`` reads LangChain's layout with ``doc_id`` from ``metadata.source``.
    Without ``layout``, the overrides apply to :data:`DEFAULT_MAPPING`.

    Raises QueryValidationError for an unknown field or layout, or an empty path.
    """
    overrides = dict(config)
    layout = overrides.pop("layout", None)
    unknown = sorted(set(overrides) - set(MAPPED_FIELDS))
    if unknown:
        raise QueryValidationError(
            f"Unknown mapping field(s) {', '.join(unknown)}: the fields are "
            f"{', '.join(MAPPED_FIELDS)} (and layout = {' | '.join(LAYOUTS)}).",
            field="mapping",
        )
    empty = sorted(name for name, path in overrides.items() if not str(path).strip())
    if empty:
        raise QueryValidationError(
            f"Empty payload path for mapping field(s) {', '.join(empty)}: give a dotted path "
            "such as metadata.source.",
            field="mapping",
        )
    if layout is None:
        base = DEFAULT_MAPPING
    elif layout in LAYOUTS:
        base = LAYOUTS[layout].mapping
    else:
        raise QueryValidationError(
            f"Unknown layout {layout!r}: one of {', '.join(LAYOUTS)}.", field="mapping.layout"
        )
    if not overrides:
        return base
    return base.with_overrides({k: str(v).strip() for k, v in overrides.items()})
