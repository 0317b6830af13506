"""Which payload field holds a benchmark's relevance ids: found, or a loud failure.

A benchmark names relevant documents by id. When those ids are not at the mapped ``doc_id``
path (LangChain keeps them at ``metadata.doc_id``, Haystack at ``meta.doc_id``),
:func:`resolve_doc_id_field` samples the collection's payloads, walks every field (nested ones,
and JSON objects kept as strings), and picks the one whose values contain the most of the ids.
When none contains any, it raises, naming the fields it tried and the flag that fixes it: an
evaluation must never report a quiet 0.0.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from ragsonde.errors import QueryValidationError
from ragsonde.models.payload import DEFAULT_MAPPING, PayloadMapping
from ragsonde.models.store import Store

__all__ = ["POINT_ID", "ResolvedField", "id_values", "resolve_doc_id_field"]

#: The pseudo-path of the point id itself (benchmarks over chunk ids).
POINT_ID = "@id"
_MAX_DEPTH = 4


@dataclass(frozen=True)
class ResolvedField:
    """The payload path the relevance ids were found at, and how well they matched."""

    path: str
    """A dotted payload path, or ``@id`` for the point id."""
    matched: int
    """Distinct benchmark ids seen at ``path`` in the sample."""
    total: int
    """Distinct benchmark ids asked about."""
    sampled: int
    """Payloads sampled."""
    configured: bool
    """True when ``path`` is one the mapping names for ``doc_id`` (no guess was needed)."""
    tried: tuple[str, ...]

    def describe(self) -> str:
        """One line for a report: where the ids were found, and whether it was a guess."""
        how = "the mapped doc_id path" if self.configured else "found by sampling payloads"
        return (
            f"relevance ids read from '{self.path}' ({how}): {self.matched} of {self.total} "
            f"ids seen in {self.sampled} sampled points"
        )


def id_values(ids: Iterable[str]) -> list[str | int]:
    """The values a filter on a relevance field matches for ``ids``: each id, and the integer it
    spells too. A benchmark's ids are text, but a payload may keep a numeric document id as an
    integer (``{"doc_id": 4983}``), which a keyword match on ``"4983"`` never finds; the
    resolver and the ranking read both as ``"4983"``, so the lookups must match both."""
    out: list[str | int] = []
    for i in ids:
        out.append(i)
        digits = i.removeprefix("-")
        # at most 18 digits: an int64, as a payload integer is (and int() of a 5,000-digit
        # text is a ValueError)
        if 0 < len(digits) <= 18 and digits.isascii() and digits.isdigit() and str(int(i)) == i:
            out.append(int(i))
    return out


def resolve_doc_id_field(
    store: Store,
    collection: str,
    ids: Iterable[str],
    mapping: PayloadMapping = DEFAULT_MAPPING,
    *,
    sample: int = 5000,
) -> ResolvedField:
    """The payload path whose values hold ``ids`` (see the module docstring).

    The mapped ``doc_id`` paths are tried first; any of them that holds at least one id wins.
    Otherwise every field of the sampled payloads (and the point id) is tried, and the one that
    holds the most ids wins. Raises QueryValidationError when none holds any of them, and
    CollectionNotFoundError (from the store) when the collection does not exist.
    """
    wanted = {str(i) for i in ids}
    if not wanted:
        raise QueryValidationError("No relevance ids to resolve.", field="doc_id")
    values: dict[str, set[str]] = {}
    sampled = 0
    for batch in store.scroll(collection, batch_size=min(256, sample)):
        for point in batch[: sample - sampled]:
            sampled += 1
            values.setdefault(POINT_ID, set()).add(point.id)
            for path, value in _leaves(point.payload, "", 0):
                values.setdefault(path, set()).add(value)
        if sampled >= sample:
            break
    mapped = mapping.paths.get("doc_id", ())
    tried: list[str] = list(mapped)
    for path in mapped:  # the mapped paths, in their order, over the same sample
        found = len(values.get(path, set()) & wanted)
        if found:
            return ResolvedField(path, found, len(wanted), sampled, True, tuple(tried))
    scored = sorted(
        ((len(v & wanted), path) for path, v in values.items() if path not in mapped),
        key=lambda t: (-t[0], t[1] != POINT_ID, t[1].count("."), t[1]),
    )
    tried.extend(path for _, path in scored)
    if scored and scored[0][0] > 0:
        found, path = scored[0]
        rivals = [p for n, p in scored[1:] if n == found]
        if path == POINT_ID and rivals:  # chunk ids or a document field: a guess would be wrong
            raise QueryValidationError(
                f"The relevance ids are as many point ids of '{collection}' ({found} of "
                f"{len(wanted)}) as values of {', '.join(rivals[:3])}: which they name cannot be "
                f"told. If they are document ids, set --field doc_id={rivals[0]}; if they are "
                "chunk (point) ids, pass --relevance-by chunk.",
                field="doc_id",
            )
        return ResolvedField(path, found, len(wanted), sampled, False, tuple(tried))
    example = ", ".join(sorted(wanted)[:3])
    if not sampled:  # a failed ingest leaves its collection, empty: not a mapping to set
        raise QueryValidationError(
            f"Collection '{collection}' is empty (no points): nothing to evaluate against. An "
            "ingest that read nothing leaves its collection empty; ingest the documents again.",
            field="collection",
        )
    from ragsonde.ingest.parse import PARSER_FOR_SUFFIX  # what a folder ingest reads

    suffixed = sorted(w for w in wanted if PurePosixPath(w).suffix.lower() in PARSER_FOR_SUFFIX)
    hint = (
        f" A folder's document ids are their paths without the suffix ({suffixed[0]} → "
        f"{PurePosixPath(suffixed[0]).with_suffix('')})."
        if suffixed
        else ""
    )
    raise QueryValidationError(
        f"None of the {len(wanted)} relevance ids (e.g. {example}) is in any payload field of "
        f"{sampled} sampled points of '{collection}'. Fields tried: {', '.join(tried) or 'none'}. "
        "Set the field that holds your document ids with --field doc_id=PATH (dotted for nested "
        "payloads, e.g. metadata.source), or [mapping] doc_id in ragsonde.toml; or check that "
        f"the benchmark belongs to this collection.{hint}",
        field="doc_id",
    )


def _leaves(node: Any, prefix: str, depth: int) -> Iterator[tuple[str, str]]:
    """``(dotted path, value as a string)`` for each scalar in a payload, lists flattened,
    JSON objects kept as strings decoded."""
    if isinstance(node, str) and prefix and node.startswith("{") and depth <= _MAX_DEPTH:
        decoded = _json(node)
        if isinstance(decoded, dict):
            yield from _leaves(decoded, prefix, depth)
            return
    if isinstance(node, Mapping):
        if depth > _MAX_DEPTH:
            return
        for key, value in node.items():
            yield from _leaves(value, f"{prefix}.{key}" if prefix else str(key), depth + 1)
    elif isinstance(node, list):
        for item in node:
            if isinstance(item, str | int) and not isinstance(item, bool):
                yield prefix, str(item)
    elif isinstance(node, str | int) and not isinstance(node, bool) and prefix:
        yield prefix, str(node)


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON; nested deeper than the parser goes
        return None
