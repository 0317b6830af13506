"""Temporary index variants of a collection: the same points, another quantization or HNSW.

``ragsonde tune`` measures what quantization and HNSW settings cost on a team's own data without
touching their collection: :class:`SourcePoints` reads the collection once through the existing
:meth:`Store.scroll`, and :class:`VariantBuilder` copies those points into a collection of a
scratch store (an embedded store in a temporary folder, built with ``force_index``) created with
the chosen :class:`VariantSpec`, and measures it. :class:`IndexVariant` then searches it through
the same :class:`~ragsonde.models.store.Store` interface the retriever uses, one
:class:`~ragsonde.models.points.SearchSpec` per query (``hnsw_ef``, rescoring, oversampling, exact;
for hybrid search the fusion), made by ``SearchSpec.of`` from the same
:class:`~ragsonde.models.params.SearchParams` that ``query`` and ``eval`` run: a tuned setting
runs in ``query``/``eval``/``serve`` exactly as the sweep measured it.

Variants are always built in the embedded engine (the Qdrant segment code, in-process). Where the
user's backend would ignore a setting in production (qdrant-client's local mode has no
quantization), :func:`measurable` says so and the report writes "not measurable on this backend".
Engine failures are translated by the store, at its boundary. :func:`build_tuned_copy`
(``--apply``) goes through the store interface (``create_collection(index=...)``) too, so it
works on every backend.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from ragsonde.errors import QueryValidationError, RagsondeError
from ragsonde.models.index import (
    DEFAULT_FULL_SCAN_KB,
    Bm25Params,
    Hnsw,
    IndexConfig,
    Quantization,
    measurable,
)
from ragsonde.models.payload import get_path
from ragsonde.models.points import PointRecord, SearchSpec, SparseVector
from ragsonde.models.scores import Distance, summable_of
from ragsonde.models.store import Store
from ragsonde.models.unread import Unread, id_text
from ragsonde.progress import Progress
from ragsonde.store.edge import EdgeStore

__all__ = [
    "DEFAULT_FULL_SCAN_KB",
    "Bm25Params",
    "Hnsw",
    "IndexVariant",
    "Quantization",
    "Ranked",
    "SourcePoints",
    "VariantBuilder",
    "VariantSpec",
    "VariantStats",
    "build_tuned_copy",
    "measurable",
    "reap_orphans",
]


#: Per query, its ranked ``(point id, score)`` pairs; and the per-query latencies in ms.
Ranked = tuple[list[list[tuple[str, float]]], list[float]]
#: The collection a variant is, in its scratch store.
_VARIANT = "variant"
_FOLDER_PREFIX = "ragsonde-variant-"
#: A variant folder at least this old whose collection no process holds was left by a tune
#: killed outright (SIGKILL, a crash: no ``finally`` ran); the next builder deletes it. The age
#: spares a folder another tune has just made and not locked yet.
ORPHAN_AGE_S = 300.0
_WRITE_BATCH = 512


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
    distance: Distance = Distance.COSINE
    """The dense vector's distance: each variant is built with it (a Euclid collection tuned
    as a Cosine one would measure another ranking than the one ``--apply`` builds)."""
    unread: Unread = field(default_factory=Unread)
    """Document ids of a type that is no id (a list, an object): each such point its own doc."""

    @property
    def dimension(self) -> int:
        return int(self.vectors.shape[1])

    @classmethod
    def read(
        cls, store: Store, collection: str, *, doc_field: str | None = "doc_id"
    ) -> SourcePoints:
        """Scroll ``collection`` with its vectors; a point without ``doc_field`` (a dotted
        payload path, e.g. LangChain's ``metadata.doc_id``; ``None``: the point id) is its own
        doc."""
        info = store.collection_info(collection)
        ids: list[str] = []
        rows: list[Sequence[float]] = []
        sparse: list[SparseVector] = []
        docs: list[str] = []
        payloads: list[dict[str, Any]] = []
        unread = Unread()
        for batch in store.scroll(collection, batch_size=512, with_vectors=True):
            for p in batch:
                if p.vector is None:
                    continue
                ids.append(p.id)
                rows.append(p.vector)
                sparse.append(p.sparse or SparseVector([], []))
                value = get_path(p.payload, doc_field) if doc_field is not None else None
                doc = id_text(value)  # as eval reads a hit's document: a list is none
                if doc is None and value is not None:
                    unread.add("doc_id", doc_field or "doc_id", value, p.id)
                docs.append(doc if doc is not None else p.id)
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
            distance=info.distance,
            unread=unread,
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


def reap_orphans(workdir: Path) -> list[Path]:
    """Delete the variant folders under ``workdir`` that killed tunes left (a copy of the
    collection each: they filled the disk run after run); returns them. A folder is left when
    it is younger than :data:`ORPHAN_AGE_S` or a process holds its collection."""
    from ragsonde.errors import StoreConnectionError
    from ragsonde.store.lock import lock_shard

    removed = []
    for folder in workdir.glob(f"{_FOLDER_PREFIX}*"):
        shard = folder / "collections" / _VARIANT
        try:
            if time.time() - folder.stat().st_mtime < ORPHAN_AGE_S:
                continue
            if shard.is_dir():
                lock_shard(_VARIANT, shard).release()  # held by a live tune: refused
        except (OSError, StoreConnectionError):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


class _Scratch:
    """A variant's collection in its scratch store, and the folder it owns (if any)."""

    def __init__(self, store: EdgeStore, name: str, owned: Path | None) -> None:
        self.store, self.name, self.owned = store, name, owned
        self.path = store.home / "collections" / name

    def release(self) -> None:
        """Close the store and keep the collection (another store can then open it: the tests
        compare a variant's searches with a store's this way)."""
        self.store.close()

    def close(self) -> None:
        """Delete the collection (and the folder it owns) and close the store."""
        with contextlib.suppress(RagsondeError):  # closing twice: nothing left to delete
            self.store.delete_collection(self.name)
        self.store.close()
        if self.owned is not None:
            shutil.rmtree(self.owned, ignore_errors=True)


class IndexVariant:
    """One built variant: a collection of a scratch store, deleted by :meth:`close`."""

    def __init__(
        self, spec: VariantSpec, source: SourcePoints, shard: _Scratch, stats: VariantStats
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
        """Dense search as ``spec`` says (its knobs and ``limit``; its vector is each row of
        ``queries``), one request per query (so each is timed): hits and latencies in ms. The
        hits' scores are those a sum of chunks adds (:func:`~ragsonde.models.scores.summable_of`:
        a distance as ``1 / (1 + d)``), as the evaluation adds them."""
        return self._timed(
            (replace(spec, vector=row.tolist(), mode="dense", sparse=None) for row in queries),
            summable_of(self.source.distance),
        )

    def hybrid(
        self, queries: np.ndarray, sparse: Sequence[SparseVector], spec: SearchSpec
    ) -> Ranked:
        """Dense + BM25 fused as ``spec`` says (its fusion, ``rrf_k``, ``fusion_weights``,
        ``prefetch_limit``, knobs and ``limit``), one query at a time (so each is timed), by the
        store as every search is fused."""
        if self.source.sparse_name is None:
            raise QueryValidationError(
                f"Collection '{self.source.collection}' has no BM25 vectors: hybrid fusion "
                "cannot be tuned. Re-ingest it with --sparse.",
                field="mode",
            )
        return self._timed(
            replace(spec, vector=row.tolist(), mode="hybrid", sparse=sv)
            for row, sv in zip(queries, sparse, strict=True)
        )

    def _timed(
        self, specs: Iterable[SearchSpec], score: Callable[[float], float] = float
    ) -> Ranked:
        """Each search alone, timed: its ranked ``(id, score(raw score))`` pairs, and the
        latencies in ms."""
        store, name = self._shard.store, self._shard.name
        out: list[list[tuple[str, float]]] = []
        times: list[float] = []
        for spec in specs:
            t0 = time.perf_counter()
            (hits,) = store.search(name, [spec])
            times.append((time.perf_counter() - t0) * 1000.0)
            out.append([(h.id, score(h.score)) for h in hits])
        return out, times

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
        """Delete the variant's collection and its folder."""
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
        reap_orphans(self.workdir)

    def build(
        self,
        spec: VariantSpec,
        *,
        path: Path | None = None,
        sparse: Sequence[SparseVector] | None = None,
    ) -> IndexVariant:
        """Write every point into a new collection with ``spec``, build its index, measure it.

        ``path``: the collection's folder, ``<home>/collections/<name>`` of an embedded store
        (default: a temporary home of its own, deleted with the variant). ``sparse``: BM25
        vectors to write instead of the collection's (one per point, in order).
        """
        owned: Path | None = None
        if path is None:
            home = owned = Path(tempfile.mkdtemp(prefix=_FOLDER_PREFIX, dir=self.workdir))
            name = _VARIANT
        else:
            home, name = path.parent.parent, path.name
        try:  # a Ctrl-C while the store opens left the folder for the next tune's reaper
            store = EdgeStore(home, force_index=self.force_index)
        except BaseException:
            if owned is not None:
                shutil.rmtree(owned, ignore_errors=True)
            raise
        shard = _Scratch(store, name, owned)
        try:
            build_s = self._write(store, name, spec, sparse)
            stats = self._stats(store, name, build_s)
        except BaseException:
            shard.close()
            raise
        return IndexVariant(spec, self.source, shard, stats)

    def _write(
        self,
        store: EdgeStore,
        name: str,
        spec: VariantSpec,
        sparse: Sequence[SparseVector] | None,
    ) -> float:
        """Create the collection, write the points, build the index: the seconds the engine
        spent flushing and building it (writes excluded)."""
        src = self.source
        lexical = sparse if sparse is not None else src.sparse
        store.create_collection(
            name,
            src.dimension,
            vector_name=src.vector_name,
            sparse_vector_name=src.sparse_name,
            distance=src.distance,
            index=IndexConfig(quantization=spec.quantization, hnsw=spec.hnsw),
        )
        for start in range(0, len(src.ids), _WRITE_BATCH):
            stop = min(start + _WRITE_BATCH, len(src.ids))
            store.upsert(
                name,
                [
                    PointRecord(
                        src.ids[i],
                        src.vectors[i].tolist(),
                        {},
                        lexical[i] if lexical is not None else None,
                    )
                    for i in range(start, stop)
                ],
            )
        t0 = time.perf_counter()
        store.build_index(name)
        return time.perf_counter() - t0

    def _stats(self, store: EdgeStore, name: str, build_s: float) -> VariantStats:
        n, dim = self.source.vectors.shape
        f32 = int(n * dim * 4)
        files = store.footprint(name)
        return VariantStats(
            points=n,
            indexed_vectors=store.collection_info(name).indexed_vectors_count,
            build_s=build_s,
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
