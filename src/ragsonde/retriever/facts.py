"""What the retriever knows about a collection, read once and kept a few seconds: its info
(size, vectors, distance), the BM25 language its chunks record, how it was built
(:class:`~ragsonde.models.params.IndexParams`), and whether ragsonde's BM25 queries can search
its sparse vector (:meth:`CollectionFacts.require_mode`: the one check of a search mode against
a collection, for the retriever and the traffic replay alike).

Kept ``TTL_S`` seconds, so a collection rebuilt behind a running server is read again soon; each
is one store call (and one one-point scroll for what the chunks record) per collection.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from ragsonde.embedders.sparse import (
    BM25_AGREEMENT_MIN,
    bm25_agreement,
    query_encoder,
    query_language,
    recorded_language,
)
from ragsonde.errors import QueryValidationError
from ragsonde.models.index import Bm25Params
from ragsonde.models.params import IndexParams
from ragsonde.models.payload import PayloadMapping
from ragsonde.models.points import CollectionInfo, PointRecord
from ragsonde.models.store import Store

__all__ = ["TTL_S", "CollectionFacts"]

TTL_S = 5.0
#: Chunks of a collection another pipeline wrote whose text is BM25-encoded and compared with
#: their stored sparse vectors (:meth:`CollectionFacts.bm25_problem`).
BM25_SAMPLE = 16

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
        self._bm25: dict[str, tuple[float, str | None]] = {}

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

    def bm25_problem(self, name: str, mapping: PayloadMapping, language: str) -> str | None:
        """Why ragsonde's BM25 queries (in ``language``) cannot search ``name``'s sparse vector,
        or ``None`` when they can or it has none. A collection whose chunks record ragsonde's
        BM25 (:func:`~ragsonde.embedders.sparse.recorded_language`) is taken at its word; one
        another pipeline wrote (LangChain's or LlamaIndex's hybrid mode, a script) is checked:
        :data:`BM25_SAMPLE` of its chunks' text (read through ``mapping``) BM25-encoded and
        compared with their stored sparse vectors (:func:`~ragsonde.embedders.sparse.
        bm25_agreement`). Its vectors may come from SPLADE, BM42 or a hashing vectorizer, whose
        indices ragsonde's query terms do not share: searched anyway, every query would quietly
        find nothing (or noise)."""

        def read() -> str | None:
            info = self.info(name)
            if info.sparse_vector_name is None or self.recorded_language(name) is not None:
                return None
            sample = next(
                iter(self._store().scroll(name, batch_size=BM25_SAMPLE, with_vectors=True)), []
            )
            chunks = [(p.sparse, mapping.read(p.payload).text) for p in sample]
            share = bm25_agreement(chunks, query_encoder(language))
            if share is None or share >= BM25_AGREEMENT_MIN:
                return None
            return (
                f"its sparse vector '{info.sparse_vector_name}' is not a BM25 ragsonde can "
                f"query: of the terms ragsonde's BM25 ({language}) finds in {len(sample)} of its "
                f"chunks, {share:.0%} are in their stored sparse vectors (another encoder made "
                "them: SPLADE, BM42, a hashing vectorizer?)"
            )

        return _fresh(self._bm25, f"{name}\n{language}", read)

    def require_mode(
        self, name: str, mode: str, mapping: PayloadMapping, language_setting: str | None
    ) -> None:
        """Refuse, with a VALIDATION_ERROR saying what to do, a ``sparse`` or ``hybrid`` search
        of a collection with no sparse vector, or with one ragsonde's BM25 cannot query
        (:meth:`bm25_problem`)."""
        if mode == "dense":
            return
        if self.info(name).sparse_vector_name is None:
            raise QueryValidationError(
                f"Collection '{name}' was built for dense search only, so mode '{mode}' is not "
                "available. Re-ingest it with sparse (BM25) vectors (`ragsonde ingest --sparse`), "
                "or use mode 'dense'.",
                field="mode",
            )
        language = query_language(name, self.recorded_language(name), language_setting)
        problem = self.bm25_problem(name, mapping, language)
        if problem is not None:
            raise QueryValidationError(
                f"Collection '{name}': {problem}, so mode '{mode}' would search it with query "
                "terms it does not hold. Use mode 'dense', or ingest the documents with "
                "`ragsonde ingest --sparse` into a collection of ragsonde's own (if the vectors "
                "are BM25 in another language, set index.bm25_language).",
                field="mode",
            )
