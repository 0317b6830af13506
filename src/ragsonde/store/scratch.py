"""A scratch shard: a throwaway Qdrant Edge shard in a folder of its own, outside any store.

``ragsonde tune`` measures index settings on a copy of a collection's points
(:mod:`ragsonde.tune.variants`); this module is the engine side of that copy and the only one
that talks to ``qdrant_edge`` for it. :meth:`ScratchShard.build` writes the points into a new
shard with an :class:`~ragsonde.models.index.IndexConfig`, builds its index and measures
it; :meth:`ScratchShard.search` and :meth:`ScratchShard.hybrid` run one engine request per query
and time each. Their searches go through the same knob -> engine translation as the stores'
(:mod:`ragsonde.store._convert`: each takes a :class:`~ragsonde.models.points.SearchSpec`, made by
``SearchSpec.of`` from the :class:`~ragsonde.models.params.SearchParams` the retriever uses), and
``linear`` fusion through the stores' :func:`~ragsonde.store._fusion.fuse_linear`, so a tuned
setting runs in ``query``/``eval``/``serve`` exactly as the sweep measured it.

``force_index`` lowers the engine's indexing and full-scan thresholds so that even a small
collection gets (and uses) its HNSW graph, which no store would do to a user's collection.
Engine and OS failures are translated by type here, at the store boundary
(:func:`ragsonde.store._errors.scratch_table`); anything else is a bug and propagates.
"""

from __future__ import annotations

import contextlib
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragsonde.errors import RagsondeError
from ragsonde.models.index import DEFAULT_FULL_SCAN_KB, IndexConfig
from ragsonde.models.points import SearchSpec, SparseVector, prefetch_depth
from ragsonde.store._convert import edge_fusion, spec_params
from ragsonde.store._errors import Where, scratch_table, translating
from ragsonde.store._fusion import fuse_linear

__all__ = ["Footprint", "Ranked", "ScratchShard"]

#: Per query, its ranked ``(point id, score)`` pairs; and the per-query latencies in ms.
Ranked = tuple[list[list[tuple[str, float]]], list[float]]


@dataclass(frozen=True)
class Footprint:
    """What a built shard holds on disk, read from its files."""

    disk_bytes: int
    """Allocated bytes of every file but the write-ahead log."""
    quantized_bytes: int
    """Bytes of the dense vector's quantized codes (0: none were written)."""
    index_bytes: int
    """Bytes of the dense vector's HNSW graph."""


def _engine_id(key: str) -> int | uuid.UUID | str:
    if key.isdigit():
        return int(key)
    try:
        return uuid.UUID(key)
    except ValueError:
        return key


def _files(path: Path) -> Iterator[Path]:
    return (p for p in path.rglob("*") if p.is_file())


def _allocated(p: Path) -> int:
    return int(p.stat().st_blocks) * 512


class ScratchShard:
    """One built scratch shard in ``path`` (its own folder, deleted by :meth:`close`)."""

    def __init__(
        self,
        path: Path,
        shard: Any,
        *,
        label: str,
        vector_name: str,
        sparse_name: str | None,
        build_s: float,
        indexed_vectors: int,
    ) -> None:
        self.path = path
        self.label = label
        self.vector_name = vector_name
        self.sparse_name = sparse_name
        self.build_s = build_s
        """Seconds the engine spent flushing and building the index (writes excluded)."""
        self.indexed_vectors = indexed_vectors
        self._shard = shard

    @classmethod
    def build(
        cls,
        path: Path,
        *,
        label: str,
        index: IndexConfig,
        vector_name: str,
        dimension: int,
        ids: Sequence[str],
        vectors: np.ndarray,
        sparse_name: str | None = None,
        sparse: Sequence[SparseVector] | None = None,
        force_index: bool = True,
    ) -> ScratchShard:
        """Create a shard in the empty folder ``path`` with ``index``, write every point (its
        dense row, and its BM25 vector when ``sparse_name`` and ``sparse`` are given), build the
        index. ``label`` names the shard in error messages. ``path`` is deleted on failure."""
        import qdrant_edge as qe

        full_scan = 1 if force_index else DEFAULT_FULL_SCAN_KB
        try:
            with _translate(path, label):
                config = qe.EdgeConfig(
                    vectors={
                        vector_name: index.edge_vector_params(
                            qe, dimension, qe.Distance.Cosine, full_scan
                        )
                    },
                    sparse_vectors=(
                        {sparse_name: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}
                        if sparse_name
                        else None
                    ),
                    optimizers=qe.EdgeOptimizersConfig(indexing_threshold=1)
                    if force_index
                    else None,
                )
                shard = qe.EdgeShard.create(str(path), config)
                _write(qe, shard, vector_name, ids, vectors, sparse_name, sparse)
                t0 = time.perf_counter()
                shard.flush()
                shard.optimize()
                shard.flush()
                build_s = time.perf_counter() - t0
                indexed = int(shard.info().indexed_vectors_count)
        except BaseException:
            shutil.rmtree(path, ignore_errors=True)
            raise
        return cls(
            path,
            shard,
            label=label,
            vector_name=vector_name,
            sparse_name=sparse_name,
            build_s=build_s,
            indexed_vectors=indexed,
        )

    def footprint(self) -> Footprint:
        """The shard's files: on disk in all, quantized codes, HNSW graph."""
        suffix = f"-{self.vector_name}" if self.vector_name else ""
        files = list(_files(self.path))
        return Footprint(
            disk_bytes=sum(_allocated(p) for p in files if "wal" not in p.parts),
            quantized_bytes=sum(
                p.stat().st_size
                for p in files
                if p.name.startswith("quantized.") and p.parent.name == f"vector_storage{suffix}"
            ),
            index_bytes=sum(
                p.stat().st_size for p in files if p.parent.name == f"vector_index{suffix}"
            ),
        )

    def search(self, queries: np.ndarray, spec: SearchSpec) -> Ranked:
        """Dense search as ``spec`` says (its knobs and ``limit``; its vector is each row of
        ``queries``), one request per query (so each is timed)."""
        import qdrant_edge as qe

        with _translate(self.path, self.label):
            params = spec_params(qe, spec)
            return _timed(
                (
                    qe.QueryRequest(
                        limit=spec.limit,
                        query=qe.Query.Nearest(row.tolist(), using=self.vector_name),
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
        spec: SearchSpec,
    ) -> Ranked:
        """Dense + BM25 fused as ``spec`` says (a hybrid search: its fusion, ``rrf_k``,
        ``fusion_weights``, ``prefetch_limit``, knobs and ``limit``), one query at a time (so
        each is timed): inside the engine (RRF, DBSF), or, for ``linear``, by
        :func:`~ragsonde.store._fusion.fuse_linear` from the two candidate lists fetched in one
        engine batch, as the stores do. The shard must have been built with a
        ``sparse_name``."""
        import qdrant_edge as qe

        if self.sparse_name is None:  # the caller checks the collection first; this is a bug
            raise RuntimeError(f"scratch shard {self.label} was built without BM25 vectors")
        limit, depth = spec.limit, prefetch_depth(spec)
        with _translate(self.path, f"{self.label} ({spec.fusion})"):
            params = spec_params(qe, spec)
            rows = [
                (
                    qe.Query.Nearest(row.tolist(), using=self.vector_name),
                    qe.Query.Nearest(
                        qe.SparseVector(sv.indices, sv.values), using=self.sparse_name
                    ),
                )
                for row, sv in zip(queries, sparse, strict=True)
            ]
            if spec.fusion == "linear":
                bare: dict[str, Any] = {
                    "limit": depth,
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
                weights = spec.fusion_weights or (0.0, 0.0)  # SearchParams requires them
                return _timed(sides, lambda batch: self._fused(batch, weights, limit))
            engine_fusion = edge_fusion(qe, spec.fusion, spec.rrf_k, spec.fusion_weights)
            return _timed(
                (
                    qe.QueryRequest(
                        limit=limit,
                        query=engine_fusion,
                        prefetches=[
                            qe.Prefetch(limit=depth, query=dense_q, params=params),
                            qe.Prefetch(limit=depth, query=sparse_q),
                        ],
                        with_payload=False,
                        with_vector=False,
                    )
                    for dense_q, sparse_q in rows
                ),
                self._query,
            )

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

    def release(self) -> None:
        """Close the engine's handle and keep the folder (a store can then open it as a
        collection: the tests compare a variant's searches with a store's this way)."""
        # closing twice, or after an engine failure: nothing more to release
        with contextlib.suppress(RagsondeError), _translate(self.path, self.label):
            self._shard.close()

    def close(self) -> None:
        """Close the shard and delete its folder."""
        self.release()
        shutil.rmtree(self.path, ignore_errors=True)


def _translate(path: Path, label: str) -> AbstractContextManager[None]:
    return translating(scratch_table(), Where(str(path), label))


def _write(
    qe: Any,
    shard: Any,
    vector_name: str,
    ids: Sequence[str],
    vectors: np.ndarray,
    sparse_name: str | None,
    sparse: Sequence[SparseVector] | None,
) -> None:
    for start in range(0, len(ids), 512):
        batch = []
        for i in range(start, min(start + 512, len(ids))):
            vector: dict[str, Any] = {vector_name: vectors[i].tolist()}
            if sparse is not None and sparse_name:
                sv = sparse[i]
                vector[sparse_name] = qe.SparseVector(sv.indices, sv.values)
            batch.append(qe.Point(_engine_id(ids[i]), vector, None))
        shard.update(qe.UpdateOperation.upsert_points(batch))


def _timed(items: Iterable[Any], run: Callable[[Any], Sequence[tuple[Any, float]]]) -> Ranked:
    """``run`` each item (one query's engine request or requests), timing the run alone: its
    ranked ``(id, score)`` pairs with text ids, and the latencies in ms."""
    out: list[list[tuple[str, float]]] = []
    times: list[float] = []
    for item in items:
        t0 = time.perf_counter()
        ranked = run(item)
        times.append((time.perf_counter() - t0) * 1000.0)
        out.append([(str(pid), float(score)) for pid, score in ranked])
    return out, times
