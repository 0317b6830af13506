"""Contract filters (``{"url": "…"}``, ``{"section": ["a", "b"]}``) → store filter specs.

A filter key is a contract field (mapped through the payload mapping) or a payload field name.
It must exist in the collection, as a payload index or in its stored payloads; a key that does
not, or one whose stored values are objects or floats (no exact match on them), is a
VALIDATION_ERROR that lists what can be filtered. Never ignored silently.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from ragsonde.errors import QueryValidationError
from ragsonde.models.payload import PayloadMapping, get_path
from ragsonde.models.points import CollectionInfo, FilterSpec
from ragsonde.models.store import SearchStore, Store

__all__ = ["FilterResolver"]

_SAMPLE = 256
_TTL_S = 30.0
_MATCHABLE = (str, int, bool)
#: The values a payload index of each kind matches exactly.
_INDEX_KINDS: dict[str, tuple[type, ...]] = {
    "keyword": (str,),
    "text": (str,),
    "uuid": (str,),
    "integer": (int,),
    "bool": (bool,),
}
_KIND_NAMES = {str: "text", int: "integers", bool: "booleans"}


class FilterResolver:
    """Resolves filter keys to payload paths for one collection at a time (cached)."""

    def __init__(self, mapping: PayloadMapping) -> None:
        self._mapping = mapping
        self._seen: dict[str, tuple[float, dict[str, set[type]]]] = {}

    def resolve(
        self,
        filters: Mapping[str, Any] | None,
        info: CollectionInfo,
        store: SearchStore,
    ) -> FilterSpec | None:
        if not filters:
            return None
        spec: dict[str, list[str | int | bool]] = {}
        for key, value in filters.items():
            path = self._path(key, info, store)
            values = value if isinstance(value, list) else [value]
            self._check_values(key, path, values, info, store)
            spec[path] = list(values)
        return spec

    def _check_values(
        self, key: str, path: str, values: list[Any], info: CollectionInfo, store: SearchStore
    ) -> None:
        """A value of another kind than the field holds matches nothing: ``{"chunk_index":
        "0"}`` on an integer field, ``{"url": true}``. That was an empty answer, which looks
        like "nothing relevant"; it is a VALIDATION_ERROR naming what the field holds."""
        held = set(_INDEX_KINDS.get(info.indexed_fields.get(path, ""), ()))
        held |= self._sampled(info, store).get(path, set()) & set(_MATCHABLE)
        if not held:
            return  # nothing known of it (an index of another kind, or no sample): not judged
        for v in values:
            kind = bool if isinstance(v, bool) else type(v)
            if kind not in held:
                names = " or ".join(sorted(_KIND_NAMES[t] for t in held))
                raise QueryValidationError(
                    f"Cannot filter on '{key}' with {v!r}: in collection '{info.name}' it holds "
                    f"{names}, so it would match nothing. Give the value as {names}.",
                    field=f"filters.{key}",
                )

    def _path(self, key: str, info: CollectionInfo, store: SearchStore) -> str:
        candidates = (key, *self._mapping.paths.get(key, ()))
        for path in candidates:
            if path in info.indexed_fields:
                return path
        seen = self._sampled(info, store)
        for path in candidates:
            types = seen.get(path)
            if types is None:
                continue
            if not types <= set(_MATCHABLE):
                kinds = ", ".join(sorted(t.__name__ for t in types))
                raise QueryValidationError(
                    f"Cannot filter on '{key}' in collection '{info.name}': its values are "
                    f"{kinds}; filters match strings, integers and booleans exactly.",
                    field=f"filters.{key}",
                )
            return path
        known = sorted(
            set(info.indexed_fields) | {p for p, t in seen.items() if t <= set(_MATCHABLE)}
        )
        raise QueryValidationError(
            f"Cannot filter on '{key}': collection '{info.name}' has no such payload field. "
            f"Filterable fields: {', '.join(known) if known else 'none'}.",
            field=f"filters.{key}",
        )

    def _sampled(self, info: CollectionInfo, store: SearchStore) -> dict[str, set[type]]:
        """Payload paths (top level and one level into dicts) seen in a sample of points."""
        now = time.monotonic()
        cached = self._seen.get(info.name)
        if cached and now - cached[0] < _TTL_S:
            return cached[1]
        seen: dict[str, set[type]] = {}
        if isinstance(store, Store):
            for batch in store.scroll(info.name, batch_size=_SAMPLE):
                for rec in batch:
                    for key, value in rec.payload.items():
                        _note(seen, key, value)
                        if isinstance(value, Mapping):
                            for sub, _subval in value.items():
                                _note(seen, f"{key}.{sub}", get_path(value, str(sub)))
                break
        self._seen[info.name] = (now, seen)
        return seen


def _note(seen: dict[str, set[type]], path: str, value: Any) -> None:
    if value is None:
        return
    kind: type = type(value)
    if isinstance(value, list):
        kinds = {type(v) for v in value if v is not None}
        seen.setdefault(path, set()).update(kinds or {str})
        return
    seen.setdefault(path, set()).add(kind)
