"""Temporary index variants of a collection: the same points, another quantization or HNSW.

``ragsonde tune`` measures what quantization and HNSW settings cost on a team's own data without
touching their collection: :class:`SourcePoints` reads the collection once through the existing
:meth:`Store.scroll`, and :class:`VariantBuilder` copies those points into a scratch shard (a
temporary folder, :class:`~ragsonde.store.scratch.ScratchShard`) built with the chosen
:class:`VariantSpec`, and measures it. :class:`IndexVariant` then searches it as a
:class:`~ragsonde.store.base.SearchSpec` says (``hnsw_ef``, rescoring, oversampling, exact; for
hybrid search the fusion), made by ``SearchSpec.of`` from the same
:class:`~ragsonde.models.params.SearchParams` that ``query`` and ``eval`` run.

Variants are always built in the embedded engine (the Qdrant segment code, in-process). Where the
user's backend would ignore a setting in production (qdrant-client's local mode has no
quantization), :func:`measurable` says so and the report writes "not measurable on this backend".

This module never touches the engine itself: the scratch shard is the store's
(:mod:`ragsonde.store.scratch`), which translates engine failures by type at the store boundary.
:func:`build_tuned_copy` (``--apply``) goes through the store interface
(``create_collection(index=...)``), so it works on every backend.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from ragsonde.errors import QueryValidationError, RagsondeError
from ragsonde.progress import Progress
from ragsonde.store.base import SearchSpec, SparseVector, Store
from ragsonde.store.index_spec import (
    DEFAULT_FULL_SCAN_KB,
    Bm25Params,
    Hnsw,
    IndexConfig,
    Quantization,
    measurable,
)
from ragsonde.store.scratch import Ranked, ScratchShard

__all__ = [
    "DEFAULT_FULL_SCAN_KB",
    "Bm25Params",
    "Hnsw",
    "IndexVariant",
    "Quantization",
    "SourcePoints",
    "VariantBuilder",
    "VariantSpec",
    "VariantStats",
    "build_tuned_copy",
    "measurable",
]


class VariantSpec(IndexConfig):
    """How one temporary index variant is built: an :class:`IndexConfig`, and BM25 parameters.

    ``bm25``: the documents' BM25 vectors are re-encoded with these parameters (the caller
    passes them to :meth:`VariantBuilder.build`); ``None`` keeps the collection's own.
    """

    bm25: Bm25Params | None = None

    @property
    def label(self) -> str:
        bm25 = f"/{self.bm25.label}" if self.bm25 else ""
        return f"{self.quantization.label}/{self.hnsw.label}{bm25}"


@dataclass
class SourcePoints:
    """Every point of a collection, read once: ids, dense matrix, BM25 vectors, document ids."""

    collection: str
    backend: str
    ids: list[str]
    vectors: np.ndarray
    sparse: list[SparseVector] | None
    doc_ids: list[str]
    vector_name: str
    sparse_name: str | None
    indexed_vectors: int
    payloads: list[dict[str, Any]] | None = None
    """The stored payloads, kept for collections with BM25 vectors: a variant re-encodes those
    from them (text, title, and the ``embed_hash`` that tells what ingest encoded)."""

    @property
    def dimension(self) -> int:
        return int(self.vectors.shape[1])

    @classmethod
    def read(cls, store: Store, collection: str, *, doc_field: str = "doc_id") -> SourcePoints:
        """Scroll ``collection`` with its vectors; a point without ``doc_field`` is its own doc."""
        info = store.collection_info(collection)
        ids: list[str] = []
        rows: list[Sequence[float]] = []
        sparse: list[SparseVector] = []
        docs: list[str] = []
        payloads: list[dict[str, Any]] = []
        for batch in store.scroll(collection, batch_size=512, with_vectors=True):
            for p in batch:
                if p.vector is None:
                    continue
                ids.append(p.id)
                rows.append(p.vector)
                sparse.append(p.sparse or SparseVector([], []))
                doc = p.payload.get(doc_field)
                docs.append(str(doc) if doc is not None else p.id)
                payloads.append(p.payload)
        if not ids:
            raise QueryValidationError(
                f"Collection '{collection}' holds no dense vectors to tune.", field="collection"
            )
        return cls(
            collection=collection,
            backend=store.backend,
            ids=ids,
            vectors=np.asarray(rows, dtype=np.float32),
            sparse=sparse if info.sparse_vector_name else None,
            doc_ids=docs,
            vector_name=info.vector_name or "",
            sparse_name=info.sparse_vector_name,
            indexed_vectors=info.indexed_vectors_count,
            payloads=payloads if info.sparse_vector_name else None,
        )


class VariantStats(BaseModel):
    """What building one variant cost, measured on its files."""

    model_config = ConfigDict(frozen=True)
    points: int
    indexed_vectors: int
    build_s: float
    disk_bytes: int
    float32_bytes: int
    vector_ram_bytes: int
    """Bytes of vectors kept in RAM: the quantized codes (originals on disk) or plain float32."""
    quantized_bytes: int
    index_bytes: int

    @property
    def memory_ratio(self) -> float:
        return self.vector_ram_bytes / max(1, self.float32_bytes)


class IndexVariant:
    """One built variant: a scratch shard in a temporary folder, deleted by :meth:`close`."""

    def __init__(
        self, spec: VariantSpec, source: SourcePoints, shard: ScratchShard, stats: VariantStats
    ) -> None:
        self.spec = spec
        self.source = source
        self.path = shard.path
        self._shard = shard
        self.stats = stats
        self._doc = dict(zip(source.ids, source.doc_ids, strict=True))

    @property
    def indexed(self) -> bool:
        return self.stats.indexed_vectors >= self.stats.points

    def doc_of(self, point_id: str) -> str:
        return self._doc.get(point_id, point_id)

    def search(self, queries: np.ndarray, spec: SearchSpec) -> Ranked:
        """Dense search, one request per query (so each is timed): hits and latencies in ms."""
        return self._shard.search(queries, spec)

    def hybrid(
        self, queries: np.ndarray, sparse: Sequence[SparseVector], spec: SearchSpec
    ) -> Ranked:
        """Dense + BM25 fused, one query at a time (so each is timed), as the stores fuse:
        see :meth:`ScratchShard.hybrid`."""
        if self.source.sparse_name is None:
            raise QueryValidationError(
                f"Collection '{self.source.collection}' has no BM25 vectors: hybrid fusion "
                "cannot be tuned. Re-ingest it with --sparse.",
                field="mode",
            )
        return self._shard.hybrid(queries, sparse, spec)

    def quantization_in_effect(self, probe: np.ndarray) -> bool:
        """True when the codes exist on disk and un-rescored scores differ from exact ones.

        A quantization the engine silently skipped would leave no codes, and scores computed
        from codes are never all equal to the float32 ones.
        """
        if self.spec.quantization.kind == "none":
            return False
        if self.stats.quantized_bytes == 0:
            return False
        raw, _ = self.search(
            probe, SearchSpec(vector=None, limit=10, hnsw_ef=128, quantization_rescore=False)
        )
        full, _ = self.search(
            probe, SearchSpec(vector=None, limit=10, hnsw_ef=128, quantization_ignore=True)
        )
        for a, b in zip(raw, full, strict=True):
            if [round(s, 4) for _, s in a] != [round(s, 4) for _, s in b]:
                return True
        return False

    def close(self) -> None:
        """Close the shard and delete its folder."""
        self._shard.close()

    def __enter__(self) -> IndexVariant:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class VariantBuilder:
    """Builds :class:`IndexVariant` copies of :class:`SourcePoints` under ``workdir``.

    ``force_index`` lowers the engine's indexing and full-scan thresholds so that even a small
    collection gets (and uses) its HNSW graph; ``False`` keeps Qdrant's defaults.
    """

    def __init__(
        self, source: SourcePoints, workdir: Path | None = None, *, force_index: bool = True
    ) -> None:
        self.source = source
        self.workdir = Path(workdir) if workdir else Path(tempfile.gettempdir())
        self.force_index = force_index

    def build(
        self,
        spec: VariantSpec,
        *,
        path: Path | None = None,
        sparse: Sequence[SparseVector] | None = None,
    ) -> IndexVariant:
        """Write every point into a new shard with ``spec``, build its index, measure it.

        ``sparse``: BM25 vectors to write instead of the collection's (one per point, in order).
        """
        src = self.source
        target = path or Path(tempfile.mkdtemp(prefix="ragsonde-variant-", dir=self.workdir))
        shard = ScratchShard.build(
            target,
            label=spec.label,
            index=spec,
            vector_name=src.vector_name,
            dimension=src.dimension,
            ids=src.ids,
            vectors=src.vectors,
            sparse_name=src.sparse_name,
            sparse=sparse if sparse is not None else src.sparse,
            force_index=self.force_index,
        )
        return IndexVariant(spec, src, shard, self._stats(shard))

    def _stats(self, shard: ScratchShard) -> VariantStats:
        n, dim = self.source.vectors.shape
        f32 = int(n * dim * 4)
        files = shard.footprint()
        return VariantStats(
            points=n,
            indexed_vectors=shard.indexed_vectors,
            build_s=shard.build_s,
            disk_bytes=files.disk_bytes,
            float32_bytes=f32,
            vector_ram_bytes=files.quantized_bytes or f32,
            quantized_bytes=files.quantized_bytes,
            index_bytes=files.index_bytes,
        )


def build_tuned_copy(
    store: Store,
    collection: str,
    target: str,
    spec: VariantSpec,
    *,
    reencode: Callable[[Sequence[Mapping[str, Any]]], Sequence[SparseVector]] | None = None,
    progress: Progress | None = None,
    batch_size: int = 256,
    extra_payload: Mapping[str, Any] | None = None,
) -> int:
    """``--apply``: copy ``collection`` (payloads, payload indexes, dense and BM25 vectors) into
    a new collection ``target`` of the same store, created with ``spec``'s quantization and HNSW;
    return the points copied. Any store: the embedded one, or qdrant-client's (a server takes
    the settings; local mode creates the copy with plain vectors).

    ``reencode``: when ``spec.bm25`` is set, stored payloads -> BM25 vectors with those
    parameters (``ragsonde.ingest.pipeline.bm25_reencoder``; ``None`` copies the stored BM25
    vectors). ``extra_payload``: fields added to every copied point (a derived copy's stamp,
    :mod:`ragsonde.models.derived`). Refuses an existing ``target`` (VALIDATION_ERROR) and never
    writes to ``collection``.
    """
    if target in store.list_collections():
        raise QueryValidationError(
            f"Collection '{target}' already exists: --apply never overwrites one. Choose "
            "another name, or delete it first.",
            field="apply",
        )
    info = store.collection_info(collection)
    total = store.count(collection)
    store.create_collection(
        target,
        info.dimension,
        vector_name=info.vector_name,
        sparse_vector_name=info.sparse_vector_name,
        indexed_fields=info.indexed_fields,
        distance=info.distance,
        index=IndexConfig(quantization=spec.quantization, hnsw=spec.hnsw),
    )
    bm25 = reencode if spec.bm25 is not None and info.sparse_vector_name else None
    copied = 0
    if progress is not None:
        progress.start(total)
    try:
        for batch in store.scroll(collection, batch_size=batch_size, with_vectors=True):
            if bm25 is not None:
                lexical = bm25([p.payload for p in batch])
                batch = [replace(p, sparse=sv) for p, sv in zip(batch, lexical, strict=True)]
            if extra_payload:
                batch = [replace(p, payload={**p.payload, **extra_payload}) for p in batch]
            store.upsert(target, batch)
            copied += len(batch)
            if progress is not None:
                progress.advance(len(batch))
        store.build_index(target)
    except BaseException:
        with contextlib.suppress(RagsondeError):  # never leave half a copy behind
            store.delete_collection(target)
        raise
    return copied
