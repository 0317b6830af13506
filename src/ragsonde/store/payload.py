"""Payload mapping: where a collection keeps each contract field.

Collections built by other pipelines name payload fields differently (``content``/``text``/
``page_content``, ``position``/``chunk_index``/``chunk_id``, LangChain's nested ``metadata``).
A :class:`PayloadMapping` lists, per contract field, the payload paths to try in order; the
default one reads all the usual layouts. ``inspect`` uses :func:`detect_mapping` to show which
paths a collection actually uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CONTRACT_FIELDS",
    "DEFAULT_MAPPING",
    "ChunkFields",
    "PayloadMapping",
    "detect_mapping",
    "get_path",
]

#: The contract fields a payload maps onto.
CONTRACT_FIELDS = ("text", "url", "title", "section", "chunk_index", "created_at")


def get_path(payload: Mapping[str, Any], path: str) -> Any:
    """``payload["a"]["b"]`` for ``"a.b"``; ``None`` where any step is missing."""
    return _get_parts(payload, path.split("."))


def _get_parts(payload: Mapping[str, Any], parts: Iterable[str]) -> Any:
    node: Any = payload
    for part in parts:
        # ``type is dict`` first: skips the ABC check in the usual case (hot: every result)
        if type(node) is dict or isinstance(node, Mapping):
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


#: Per contract field, its candidate paths with their parts:
#: ``(("text", (("text", ("text",)), ...)), ...)``.
_Compiled = tuple[tuple[str, tuple[tuple[str, tuple[str, ...]], ...]], ...]


@dataclass(frozen=True)
class PayloadMapping:
    """Per contract field, the payload paths to try, first found wins."""

    paths: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: {
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
        }
    )

    _compiled: _Compiled = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Each field's candidate paths split once: ``read`` runs for every result of every query.
        compiled = tuple(
            (name, tuple((path, tuple(path.split("."))) for path in self.paths.get(name, ())))
            for name in CONTRACT_FIELDS
        )
        object.__setattr__(self, "_compiled", compiled)

    def with_overrides(self, overrides: Mapping[str, str]) -> PayloadMapping:
        """A mapping where each overridden field reads only the given path."""
        paths = dict(self.paths)
        for name, path in overrides.items():
            paths[name] = (path,)
        return PayloadMapping(paths)

    def path_for(self, name: str, payload: Mapping[str, Any]) -> str | None:
        """The first path for ``name`` that ``payload`` has (non-null)."""
        for path in self.paths.get(name, ()):
            if get_path(payload, path) is not None:
                return path
        return None

    def read(self, payload: Mapping[str, Any]) -> ChunkFields:
        """Read the contract fields; every other top-level field goes to ``metadata``."""
        found: dict[str, Any] = {}
        used_top: set[str] = set()
        for name, candidates in self._compiled:
            for path, parts in candidates:
                value = _get_parts(payload, parts)
                if value is not None:
                    found[name] = value
                    if len(parts) == 1:
                        used_top.add(path)
                    break
            else:  # a field stored as null is still that field, not metadata
                used_top.update(path for path, _ in candidates if path in payload)
        text = found.get("text")
        index = found.get("chunk_index")
        return ChunkFields(
            text=text if isinstance(text, str) else ("" if text is None else str(text)),
            url=_opt_str(found.get("url")),
            title=_opt_str(found.get("title")),
            section=_opt_str(found.get("section")),
            chunk_index=index if isinstance(index, int) and index >= 0 else None,
            created_at=_opt_str(found.get("created_at")),
            metadata={k: v for k, v in payload.items() if k not in used_top},
        )


def _opt_str(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


DEFAULT_MAPPING = PayloadMapping()


def detect_mapping(
    payloads: Iterable[Mapping[str, Any]], mapping: PayloadMapping = DEFAULT_MAPPING
) -> dict[str, tuple[str | None, float]]:
    """For each contract field: the path most payloads use, and the share that have it."""
    counts: dict[str, dict[str, int]] = {name: {} for name in CONTRACT_FIELDS}
    total = 0
    for payload in payloads:
        total += 1
        for name in CONTRACT_FIELDS:
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
