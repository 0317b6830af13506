"""What the retriever knows about a collection, read once and kept a few seconds: its info
(size, vectors, distance), the BM25 language its chunks record, and how it was built
(:class:`~ragsonde.models.params.IndexParams`).

Kept ``TTL_S`` seconds, so a collection rebuilt behind a running server is read again soon; each
is one store call (and one one-point scroll for what the chunks record) per collection.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from ragsonde.embedders.sparse import recorded_language
from ragsonde.models.index import Bm25Params
from ragsonde.models.params import IndexParams
from ragsonde.models.points import CollectionInfo, PointRecord
from ragsonde.models.store import Store

__all__ = ["TTL_S", "CollectionFacts"]

TTL_S = 5.0

_T = TypeVar("_T")


def _fresh(cache: dict[str, tuple[float, _T]], key: str, load: Callable[[], _T]) -> _T:
    """``cache[key]`` while younger than :data:`TTL_S`, else ``load()``, kept with its time."""
    now = time.monotonic()
    kept = cache.get(key)
    if kept is not None and now - kept[0] < TTL_S:
        return kept[1]
    value = load()
    cache[key] = (now, value)
    return value


class CollectionFacts:
    """The cached facts of the collections one retriever searches (``store``: read lazily, so
    a retriever whose store is not open yet opens it only when asked)."""

    def __init__(self, store: Callable[[], Store]) -> None:
        self._store = store
        self._info: dict[str, tuple[float, CollectionInfo]] = {}
        self._recorded: dict[str, tuple[float, str | None]] = {}
        self._index: dict[str, tuple[float, IndexParams]] = {}

    def info(self, name: str) -> CollectionInfo:
        return _fresh(self._info, name, lambda: self._store().collection_info(name))

    def _first(self, name: str) -> PointRecord | None:
        first = next(iter(self._store().scroll(name, batch_size=1)), [])
        return first[0] if first else None

    def recorded_language(self, name: str) -> str | None:
        """The BM25 language ``name``'s chunks record (``None``: they record none)."""

        def read() -> str | None:
            point = self._first(name)
            return recorded_language(point.payload) if point is not None else None

        return _fresh(self._recorded, name, read)

    def index_params(self, name: str) -> IndexParams:
        """How ``name`` was built, as far as it records: quantization and HNSW graph from the
        engine, BM25 parameters from the label its chunks carry."""

        def read() -> IndexParams:
            info = self.info(name)
            fields: dict[str, Any] = {}
            if info.index is not None:
                fields["quantization"] = info.index.quantization.label
                fields["hnsw_m"] = info.index.hnsw.m
                fields["hnsw_ef_construct"] = info.index.hnsw.ef_construct
            if info.sparse_vector_name is not None:
                point = self._first(name)
                bm25 = Bm25Params.recorded_in(point.payload) if point is not None else None
                if bm25 is not None:
                    fields.update(
                        bm25_k1=bm25.k1,
                        bm25_b=bm25.b,
                        bm25_title_weight=bm25.title_weight,
                        bm25_language=bm25.language,
                    )
            return IndexParams(**fields)

        return _fresh(self._index, name, read)
