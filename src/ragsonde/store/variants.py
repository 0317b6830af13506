"""Temporary index variants of a collection: the same points, another quantization or HNSW.

``ragsonde tune`` measures what quantization and HNSW settings cost on a team's own data without
touching their collection: :class:`SourcePoints` reads the collection once through the existing
:meth:`Store.scroll`, and :class:`VariantBuilder` writes those points into a fresh Qdrant Edge
shard (a temporary folder) with the chosen :class:`VariantSpec`, builds its index, and measures
it (the specs live in :mod:`ragsonde.store.variant_specs`). :class:`IndexVariant` then searches
it with per-query :class:`SearchKnobs` (``hnsw_ef``, rescoring, oversampling, exact) and hybrid
:class:`FusionSpec` settings.

Variants are always built in the embedded engine (the Qdrant segment code, in-process). Where the
user's backend would ignore a setting in production (qdrant-client's local mode has no
quantization), :func:`measurable` says so and the report writes "not measurable on this backend".

Temporary variants live in scratch folders outside any store and need a forced indexing
threshold, so they talk to ``qdrant_edge`` directly; their searches go through the same knob →
engine translation as the stores' (:mod:`ragsonde.store._convert`), so a tuned setting runs in
``query``/``eval``/``serve`` exactly as the sweep measured it. Every qdrant-edge
exception is translated into :class:`~ragsonde.errors.StoreConnectionError` in :func:`_engine`,
here only. :func:`build_tuned_copy` (``--apply``) goes through the store interface instead
(``create_collection(index=...)``), so it works on every backend.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from ragsonde.errors import QueryValidationError, RagsondeError, StoreConnectionError
from ragsonde.progress import Progress
from ragsonde.store._fusion import fuse_linear
from ragsonde.store.base import SparseVector, Store
from ragsonde.store.search_specs import FusionSpec, SearchKnobs
from ragsonde.store.variant_specs import (
    DEFAULT_FULL_SCAN_KB,
    Bm25Params,
    Hnsw,
    IndexConfig,
    Quantization,
    VariantSpec,
    measurable,
)

__all__ = [
    "DEFAULT_FULL_SCAN_KB",
    "Bm25Params",
    "FusionSpec",
    "Hnsw",
    "IndexVariant",
    "Quantization",
    "SearchKnobs",
    "SourcePoints",
    "VariantBuilder",
    "VariantSpec",
    "VariantStats",
    "build_tuned_copy",
    "measurable",
]


@contextlib.contextmanager
def _engine(what: str) -> Iterator[None]:
    """qdrant-edge raises plain ``Exception``: every one becomes a StoreConnectionError."""
    try:
        yield
    except RagsondeError:
        raise
    except Exception as e:
        raise StoreConnectionError(f"The embedded Qdrant engine failed while {what}: {e}") from e


def _engine_id(key: str) -> int | uuid.UUID | str:
    if key.isdigit():
        return int(key)
    try:
        return uuid.UUID(key)
    except ValueError:
        return key


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


def _files(path: Path) -> Iterator[Path]:
    return (p for p in path.rglob("*") if p.is_file())


def _allocated(p: Path) -> int:
    return int(p.stat().st_blocks) * 512


class IndexVariant:
    """One built variant: an open Edge shard in a temporary folder, deleted by :meth:`close`."""

    def __init__(
        self, spec: VariantSpec, source: SourcePoints, path: Path, shard: Any, stats: VariantStats
    ) -> None:
        self.spec = spec
        self.source = source
        self.path = path
        self._shard = shard
        self.stats = stats
        self._doc = dict(zip(source.ids, source.doc_ids, strict=True))

    @property
    def indexed(self) -> bool:
        return self.stats.indexed_vectors >= self.stats.points

    def doc_of(self, point_id: str) -> str:
        return self._doc.get(point_id, point_id)

    def search(
        self, queries: np.ndarray, limit: int, knobs: SearchKnobs
    ) -> tuple[list[list[tuple[str, float]]], list[float]]:
        """Dense search, one request per query (so each is timed): hits and latencies in ms."""
        import qdrant_edge as qe

        params = knobs.engine_params(qe)
        using = self.source.vector_name
        with _engine(f"searching variant {self.spec.label}"):
            return self._timed(
                (
                    qe.QueryRequest(
                        limit=limit,
                        query=qe.Query.Nearest(row.tolist(), using=using),
                        params=params,
                        with_payload=False,
                        with_vector=False,
                    )
                    for row in queries
                ),
                self._query,
            )

    def hybrid(
        self,
        queries: np.ndarray,
        sparse: Sequence[SparseVector],
        limit: int,
        fusion: FusionSpec,
        knobs: SearchKnobs,
    ) -> tuple[list[list[tuple[str, float]]], list[float]]:
        """Dense + BM25 fused, one query at a time (so each is timed): inside the engine (RRF,
        DBSF), or, for ``linear``, by :func:`~ragsonde.store._fusion.fuse_linear` from the two
        candidate lists fetched in one engine batch, as the stores do."""
        import qdrant_edge as qe

        if self.source.sparse_name is None:
            raise QueryValidationError(
                f"Collection '{self.source.collection}' has no BM25 vectors: hybrid fusion "
                "cannot be tuned. Re-ingest it with --sparse.",
                field="mode",
            )
        params = knobs.engine_params(qe)
        using, sparse_using = self.source.vector_name, self.source.sparse_name
        rows = [
            (
                qe.Query.Nearest(row.tolist(), using=using),
                qe.Query.Nearest(qe.SparseVector(sv.indices, sv.values), using=sparse_using),
            )
            for row, sv in zip(queries, sparse, strict=True)
        ]
        with _engine(f"searching variant {self.spec.label} ({fusion.label})"):
            if fusion.method == "linear":
                bare: dict[str, Any] = {
                    "limit": fusion.prefetch,
                    "with_payload": False,
                    "with_vector": False,
                }
                sides = [
                    qe.QueryBatchRequest(
                        [
                            qe.QueryRequest(query=dense_q, params=params, **bare),
                            qe.QueryRequest(query=sparse_q, **bare),
                        ]
                    )
                    for dense_q, sparse_q in rows
                ]
                weights = fusion.weights or (0.0, 0.0)  # FusionSpec requires them for linear
                return self._timed(sides, lambda batch: self._fused(batch, weights, limit))
            engine_fusion = fusion.engine_fusion(qe)
            return self._timed(
                (
                    qe.QueryRequest(
                        limit=limit,
                        query=engine_fusion,
                        prefetches=[
                            qe.Prefetch(limit=fusion.prefetch, query=dense_q, params=params),
                            qe.Prefetch(limit=fusion.prefetch, query=sparse_q),
                        ],
                        with_payload=False,
                        with_vector=False,
                    )
                    for dense_q, sparse_q in rows
                ),
                self._query,
            )

    def _timed(
        self, items: Iterable[Any], run: Callable[[Any], Sequence[tuple[Any, float]]]
    ) -> tuple[list[list[tuple[str, float]]], list[float]]:
        """``run`` each item (one query's engine request or requests), timing the run alone:
        its ranked ``(id, score)`` pairs with text ids, and the latencies in ms."""
        out: list[list[tuple[str, float]]] = []
        times: list[float] = []
        for item in items:
            t0 = time.perf_counter()
            ranked = run(item)
            times.append((time.perf_counter() - t0) * 1000.0)
            out.append([(str(pid), float(score)) for pid, score in ranked])
        return out, times

    def _query(self, request: Any) -> list[tuple[Any, float]]:
        """One engine request's hits as ``(id, score)``."""
        return [(p.id, p.score) for p in self._shard.query(request)]

    def _fused(
        self, batch: Any, weights: tuple[float, float], limit: int
    ) -> list[tuple[Any, float]]:
        """One query's (dense, BM25) candidate batch, fused as the stores fuse ``linear``."""
        dense, sparse = self._shard.query_batch(batch)
        return fuse_linear(
            [(p.id, p.score) for p in dense], [(p.id, p.score) for p in sparse], weights, limit
        )

    def quantization_in_effect(self, probe: np.ndarray) -> bool:
        """True when the codes exist on disk and un-rescored scores differ from exact ones.

        A quantization the engine silently skipped would leave no codes, and scores computed
        from codes are never all equal to the float32 ones.
        """
        if self.spec.quantization.kind == "none":
            return False
        if self.stats.quantized_bytes == 0:
            return False
        raw, _ = self.search(probe, 10, SearchKnobs(hnsw_ef=128, rescore=False))
        full, _ = self.search(probe, 10, SearchKnobs(hnsw_ef=128, ignore_quantization=True))
        for a, b in zip(raw, full, strict=True):
            if [round(s, 4) for _, s in a] != [round(s, 4) for _, s in b]:
                return True
        return False

    def close(self) -> None:
        """Close the shard and delete its folder."""
        with contextlib.suppress(Exception):  # closing twice, or after an engine failure
            self._shard.close()
        shutil.rmtree(self.path, ignore_errors=True)

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
        import qdrant_edge as qe

        src = self.source
        target = path or Path(tempfile.mkdtemp(prefix="ragsonde-variant-", dir=self.workdir))
        full_scan = 1 if self.force_index else DEFAULT_FULL_SCAN_KB
        try:
            with _engine(f"building variant {spec.label}"):
                config = qe.EdgeConfig(
                    vectors={
                        src.vector_name: spec.edge_vector_params(
                            qe, src.dimension, qe.Distance.Cosine, full_scan
                        )
                    },
                    sparse_vectors=(
                        {src.sparse_name: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}
                        if src.sparse_name
                        else None
                    ),
                    optimizers=qe.EdgeOptimizersConfig(indexing_threshold=1)
                    if self.force_index
                    else None,
                )
                shard = qe.EdgeShard.create(str(target), config)
                self._write(qe, shard, sparse)
                t0 = time.perf_counter()
                shard.flush()
                shard.optimize()
                shard.flush()
                build_s = time.perf_counter() - t0
                indexed = int(shard.info().indexed_vectors_count)
        except BaseException:
            shutil.rmtree(target, ignore_errors=True)
            raise
        return IndexVariant(spec, src, target, shard, self._stats(target, indexed, build_s))

    def _write(self, qe: Any, shard: Any, sparse: Sequence[SparseVector] | None) -> None:
        src = self.source
        bm25 = sparse if sparse is not None else src.sparse
        for start in range(0, len(src.ids), 512):
            batch = []
            for i in range(start, min(start + 512, len(src.ids))):
                vector: dict[str, Any] = {src.vector_name: src.vectors[i].tolist()}
                if bm25 is not None and src.sparse_name:
                    sv = bm25[i]
                    vector[src.sparse_name] = qe.SparseVector(sv.indices, sv.values)
                batch.append(qe.Point(_engine_id(src.ids[i]), vector, None))
            shard.update(qe.UpdateOperation.upsert_points(batch))

    def _stats(self, path: Path, indexed: int, build_s: float) -> VariantStats:
        n, dim = self.source.vectors.shape
        f32 = int(n * dim * 4)
        suffix = f"-{self.source.vector_name}" if self.source.vector_name else ""
        quantized = sum(
            p.stat().st_size
            for p in _files(path)
            if p.name.startswith("quantized.") and p.parent.name == f"vector_storage{suffix}"
        )
        index = sum(
            p.stat().st_size for p in _files(path) if p.parent.name == f"vector_index{suffix}"
        )
        return VariantStats(
            points=n,
            indexed_vectors=indexed,
            build_s=build_s,
            disk_bytes=sum(_allocated(p) for p in _files(path) if "wal" not in p.parts),
            float32_bytes=f32,
            vector_ram_bytes=quantized if quantized else f32,
            quantized_bytes=quantized,
            index_bytes=index,
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
) -> int:
    """``--apply``: copy ``collection`` (payloads, payload indexes, dense and BM25 vectors) into
    a new collection ``target`` of the same store, created with ``spec``'s quantization and HNSW;
    return the points copied. Any store: the embedded one, or qdrant-client's (a server takes
    the settings; local mode creates the copy with plain vectors).

    ``reencode``: when ``spec.bm25`` is set, stored payloads -> BM25 vectors with those
    parameters (``ragsonde.ingest.pipeline.bm25_reencoder``; ``None`` copies the stored BM25
    vectors). Refuses an existing ``target`` (VALIDATION_ERROR) and never writes to ``collection``.
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
