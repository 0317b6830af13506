"""The embedded default store: Qdrant Edge, the real Qdrant engine in-process.

One Edge shard per collection, in ``<RAGSONDE_HOME>/collections/<name>/``. Nothing to start.
A shard can be open in one process at a time: ragsonde takes an exclusive lock file beside the
shard (:mod:`ragsonde.store.lock`: the owner's pid and host, nothing else) so a second process
gets a clear error saying who holds it. Within one process, stores share open shards
(reference-counted), so several retrievers on the same home work.

Sharing a home between processes (a server and ``ragsonde ingest``): Qdrant Edge cannot open a
shard in two processes at once, so they take turns. A long-lived store (the server's) is built
with ``idle_release_s``: a shard it has not used for that long is flushed, closed and unlocked by
a background thread, so another process can take it; the next request reopens it and so reads
whatever was written meanwhile (no stale data, no file watching). With ``lock_wait_s`` a store
that finds the lock taken waits that long for it instead of failing at once, so a request that
arrives during a short write waits for it rather than erroring. A waiter keeps a want file
(``.ragsonde.want.<pid>``) fresh beside the lock; a holder with idle release sees it, lets go as
soon as its current use ends, and leaves the lock to the waiter (its next use waits while the want
stands, at most ``YIELD_S``), so a server under constant load cannot starve an ingest (nor the
reverse): letting go is not enough when the next query retakes the lock before the waiter polls.
:meth:`EdgeStore.release_unused` lets go at once (an ingest calls it before it embeds, so it holds
the lock only while it writes). Built directly, a store keeps the strict defaults (hold until
closed, fail at once naming the holder's pid and host); :func:`ragsonde.store.open_store` passes
the settings' ``lock_wait_s`` (and, for the server, ``server_idle_release_s``).

Errors are translated by type in :mod:`ragsonde.store._errors` (qdrant-edge raises the plain
``Exception`` class); what the engine would refuse by message is checked before each call.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragsonde.errors import (
    CollectionNotFoundError,
    QueryValidationError,
    RagsondeError,
    StoreConnectionError,
)
from ragsonde.models.index import DEFAULT_FULL_SCAN_KB, Footprint, IndexConfig
from ragsonde.models.points import (
    CollectionInfo,
    FilterSpec,
    Hit,
    PointRecord,
    Ranked,
    SearchSpec,
)
from ragsonde.models.scores import Distance
from ragsonde.store import _convert as convert
from ragsonde.store._convert import DenseVector, VectorLayout
from ragsonde.store._edge_requests import Names, edge_request, edge_sides
from ragsonde.store._edge_shard import (
    Layout,
    Shard,
    acquire_shard_lock,
    footprint,
    load_shard,
    payload_schema,
    translate,
    validate_collection_name,
)
from ragsonde.store._fusion import SearchPlan, fused_here
from ragsonde.store.lock import WANT_POLL_S, YIELD_S, wanted

__all__ = ["EdgeStore", "validate_collection_name"]

_UPSERT_BATCH = 512

_OPEN: dict[Path, Shard] = {}
_OPEN_LOCK = threading.Lock()


class EdgeStore:
    """The embedded Qdrant Edge store (see the module docstring).

    ``vector``: which dense vector a collection with several is searched by (the setting).
    ``idle_release_s``, ``lock_wait_s``: sharing the home with other processes (module docs).
    ``force_index``: ``True`` (tune's scratch store) gives even a small collection its graph and
    uses it; ``False``: the engine's thresholds; ``None``: a graph when an ``index`` is asked for.
    """

    def __init__(
        self,
        home: Path,
        *,
        hnsw_ef: int | None = None,
        vector: str | None = None,
        idle_release_s: float | None = None,
        lock_wait_s: float = 0.0,
        force_index: bool | None = None,
    ) -> None:
        self._layout = Layout(Path(home))
        self._force_index = force_index
        self._hnsw_ef = hnsw_ef
        self._vector = vector
        self._lock_wait_s = lock_wait_s
        self._patience = threading.local()  # this thread's shorter wait (waiting_at_most)
        self._mine: dict[Path, Shard] = {}
        self._resolved: dict[str, Path] = {}
        self._yielded: dict[Path, float] = {}  # let go for a waiter: reopen after it, until then
        self._stop = threading.Event()
        if idle_release_s is not None:
            threading.Thread(
                target=self._reap_idle, args=(idle_release_s,), name="edge-idle", daemon=True
            ).start()

    @property
    def backend(self) -> str:
        return "edge"

    @property
    def home(self) -> Path:
        return self._layout.home

    # -- shard lifecycle -------------------------------------------------------------------
    def _open(self, name: str) -> Shard:
        path = self._resolved.get(name)
        if path is None:  # resolving is a few syscalls: once per name, not once per query
            path = self._resolved[name] = self._layout.path(name).resolve()
        mine = self._mine.get(path)
        if mine is not None:
            return mine
        self._after_waiter(path)
        if not self._layout.exists(name):
            raise CollectionNotFoundError(name, available=self.list_collections())
        with _OPEN_LOCK:
            # again: two threads that both missed counted 2 refs, close() released 1 (lock held)
            if (mine := self._mine.get(path)) is not None:
                return mine
            shard = _OPEN.get(path)
            if shard is None:
                wait = min(self._lock_wait_s, getattr(self._patience, "s", self._lock_wait_s))
                shard = load_shard(name, path, wait)
                _OPEN[path] = shard
            shard.refs += 1
            self._mine[path] = shard
        return shard

    def _dense(self, name: str) -> tuple[VectorLayout, DenseVector]:
        """The collection's vectors and the dense one to search (the layout outlives a reopen:
        it is the collection's config)."""
        layout = self._open(name).layout
        return layout, layout.choose(self._vector)

    def _vector_name(self, shard: Shard, with_vectors: bool) -> str | None:
        """The dense vector to read back; payload-only reads work on any collection."""
        return shard.layout.choose(self._vector).name if with_vectors else None

    @contextlib.contextmanager
    def _use(self, name: str) -> Iterator[Shard]:
        """The open shard, exclusively, with errors translated; reopened if the idle reaper
        released it between ``_open`` and here."""
        while True:
            shard = self._open(name)
            try:
                with shard.mutex:
                    if shard.closed:
                        self._mine.pop(shard.path, None)
                        continue
                    shard.last_used = time.monotonic()
                    with translate(name, shard.path):
                        yield shard
                    return
            finally:
                if shard.asked_for and not shard.closed:  # another process waits: now, not later
                    self._let_go(shard.path, shard)

    def _after_waiter(self, path: Path) -> None:
        """Having let go of ``path`` for another process, leave the lock to it: wait while its
        want file stands (it goes once the waiter holds the lock), at most ``YIELD_S``."""
        until = self._yielded.pop(path, None)
        while until is not None and time.monotonic() < until and wanted(path):
            time.sleep(0.02)

    def _reap_idle(self, idle_s: float) -> None:
        """Release shards this store alone holds and has not used for ``idle_s`` seconds, or
        at once (between two uses) when another process is waiting for one."""
        while not self._stop.wait(min(WANT_POLL_S, max(0.05, idle_s / 2))):
            for path, shard in list(self._mine.items()):
                if wanted(path):
                    shard.asked_for = True  # if in use now, the use that ends lets go
                elif time.monotonic() - shard.last_used < idle_s:
                    continue
                self._let_go(path, shard)

    def _let_go(self, path: Path, shard: Shard) -> None:
        """Flush, close and unlock ``shard`` if this store alone holds it and nobody uses it
        right now; the next use reopens it (and so reads what others wrote meanwhile)."""
        with _OPEN_LOCK:
            if shard.refs != 1 or not shard.mutex.acquire(blocking=False):
                return  # shared with another store here, or in use right now
            try:
                if shard.asked_for:
                    self._yielded[path] = time.monotonic() + YIELD_S
                shard.closed = True
                shard.refs = 0
                _OPEN.pop(path, None)
                self._mine.pop(path, None)
                shard.close()
            except RagsondeError:
                pass  # a failed flush on release: the lock is released regardless
            finally:
                shard.mutex.release()

    def release_unused(self) -> None:
        """Let other processes have the shards this store holds and is not using right now
        (an ingest calls it before it embeds, so a server on the same home keeps answering)."""
        for path, shard in list(self._mine.items()):
            self._let_go(path, shard)

    def _release(self, path: Path) -> None:
        shard = self._mine.pop(path, None)
        if shard is None:
            return
        with _OPEN_LOCK, shard.mutex:
            if shard.closed:  # the idle reaper got there first
                return
            shard.refs -= 1
            if shard.refs <= 0:
                shard.closed = True
                _OPEN.pop(path, None)
                shard.close()

    def close(self) -> None:
        """Flush and release every shard this store opened."""
        self._stop.set()
        for path in list(self._mine):
            self._release(path)

    @contextlib.contextmanager
    def waiting_at_most(self, seconds: float) -> Iterator[None]:
        """Collections opened on this thread inside wait at most ``seconds`` for a holder."""
        before, self._patience.s = getattr(self._patience, "s", self._lock_wait_s), seconds
        try:
            yield
        finally:
            self._patience.s = before

    # -- collections -----------------------------------------------------------------------
    def list_collections(self) -> list[str]:
        root = self._layout.root
        if not root.is_dir():
            return []
        return sorted(p.name for p in root.iterdir() if (p / "edge_config.json").is_file())

    def create_collection(
        self,
        name: str,
        dimension: int,
        *,
        vector_name: str | None = None,
        sparse_vector_name: str | None = None,
        indexed_fields: Mapping[str, str] | None = None,
        distance: Distance = Distance.COSINE,
        index: IndexConfig | None = None,
    ) -> CollectionInfo:
        import qdrant_edge as qe

        path = self._layout.path(name)
        if self._layout.exists(name):
            raise QueryValidationError(f"Collection '{name}' already exists.", field="collection")
        if dimension < 1:
            raise QueryValidationError("Vector size must be at least 1.", field="dimension")
        schema = payload_schema(indexed_fields or {})
        # Two processes may create one name at once: the second waits for the first and then
        # finds it made (checked again under the lock), never a lock error nor a second create.
        lock = acquire_shard_lock(name, path, self._lock_wait_s)
        try:
            if self._layout.exists(name):
                raise QueryValidationError(
                    f"Collection '{name}' already exists.", field="collection"
                )
            with translate(name, path):
                sparse = (
                    {sparse_vector_name: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}
                    if sparse_vector_name
                    else None
                )
                engine_distance = getattr(qe.Distance, Distance(distance).value)
                full_scan = 1 if self._force_index else DEFAULT_FULL_SCAN_KB
                params = (
                    qe.EdgeVectorParams(size=dimension, distance=engine_distance)
                    if index is None and not self._force_index
                    else (index or IndexConfig()).edge_vector_params(
                        qe, dimension, engine_distance, full_scan
                    )
                )
                # An index asked for is built by build_index whatever the size (the engine's
                # threshold would leave a small collection unquantized, its settings unused).
                forced = index is not None if self._force_index is None else self._force_index
                optimizers = qe.EdgeOptimizersConfig(indexing_threshold=1) if forced else None
                config = qe.EdgeConfig(
                    vectors={vector_name or "": params},
                    sparse_vectors=sparse,
                    optimizers=optimizers,
                )
                shard = qe.EdgeShard.create(str(path), config)
                for field, kind in schema.items():
                    shard.update(qe.UpdateOperation.create_field_index(field, kind))
                shard.flush()
                shard.close()
        finally:
            lock.release()
        return self.collection_info(name)

    def delete_collection(self, name: str) -> None:
        path = self._layout.path(name)
        if not self._layout.exists(name):
            raise CollectionNotFoundError(name, available=self.list_collections())
        shard = self._open(name)  # takes the lock: never delete a collection in use elsewhere
        self._release(shard.path)
        if shard.path in _OPEN:
            raise StoreConnectionError(
                f"Collection '{name}' is still open in this process; close its other users first."
            )
        with translate(name, path):
            shutil.rmtree(path)

    def collection_info(self, name: str) -> CollectionInfo:
        layout, dense = self._dense(name)
        with self._use(name) as shard:
            index = shard.indexes.get(dense.name)
            info = shard.shard.info()
            schema = {
                field: str(idx.data_type).rsplit(".", 1)[-1].lower()
                for field, idx in info.payload_schema.items()
            }
        return CollectionInfo(
            name=name,
            dimension=dense.size,
            distance=dense.distance,
            points_count=int(info.points_count),
            vector_name=dense.name,
            sparse_vector_name=layout.sparse_name,
            indexed_fields=schema,
            indexed_vectors_count=int(info.indexed_vectors_count),
            backend=self.backend,
            index=index,
        )

    def footprint(self, name: str) -> Footprint:
        """What collection ``name`` holds on disk (``tune`` measures its variants by it)."""
        return footprint(self._layout.path(name), self._dense(name)[1].name)

    # -- writes ------------------------------------------------------------------------------
    def upsert(self, collection: str, points: Sequence[PointRecord]) -> None:
        import qdrant_edge as qe

        layout, dense = self._dense(collection)
        sparse = qe.SparseVector
        for start in range(0, len(points), _UPSERT_BATCH):
            batch = []
            for p in points[start : start + _UPSERT_BATCH]:
                vectors = convert.point_vectors(p, layout, dense, sparse)
                batch.append(qe.Point(convert.point_id(p.id), vectors, p.payload))
            with self._use(collection) as shard:
                shard.shard.update(qe.UpdateOperation.upsert_points(batch))

    def delete_points(self, collection: str, ids: Sequence[str]) -> None:
        import qdrant_edge as qe

        if not ids:
            return
        pids: list[Any] = [convert.point_id(i) for i in ids]
        with self._use(collection) as shard:
            shard.shard.update(qe.UpdateOperation.delete_points(pids))

    def build_index(self, collection: str) -> None:
        """Flush, then let the engine build HNSW and payload indexes (blocks until done)."""
        with self._use(collection) as shard:
            shard.shard.flush()
            shard.shard.optimize()
            shard.shard.flush()

    # -- reads -------------------------------------------------------------------------------
    def search(self, collection: str, specs: Sequence[SearchSpec]) -> list[list[Hit]]:
        """All ``specs`` in one engine batch; a search Qdrant cannot fuse right is fused here
        (:class:`~ragsonde.store._fusion.SearchPlan`), its winners' payloads read in one call."""
        import qdrant_edge as qe

        if not specs:
            return []
        layout, dense = self._dense(collection)
        convert.check_specs(layout, dense, specs)
        plan = SearchPlan.build(
            specs,
            lambda s: edge_request(qe, s, Names(dense.name, layout.sparse_name, self._hnsw_ef)),
            lambda s: edge_sides(qe, s, Names(dense.name, layout.sparse_name, self._hnsw_ef)),
            dense.distance,
        )
        with self._use(collection) as shard:
            engine = shard.shard
            if len(plan.requests) == 1:
                batches = [engine.query(plan.requests[0])]
            else:
                batches = engine.query_batch(qe.QueryBatchRequest(list(plan.requests)))

            def fetch(ids: list[Any], with_vectors: bool) -> list[Any]:
                return list(engine.retrieve(ids, with_payload=True, with_vector=with_vectors))

            return plan.hits(batches, lambda p: convert.to_hit(p, dense.name), fetch, dense.name)

    def ranked(self, collection: str, specs: Sequence[SearchSpec]) -> list[Ranked]:
        """:meth:`search`'s rankings as ids and raw scores, payloads not read: one engine batch,
        and per hit a tuple entry instead of a :class:`Hit` (the traffic replay reads 200 hits
        a query). A search fused here goes through :meth:`search`."""
        import qdrant_edge as qe

        if not specs:
            return []
        layout, dense = self._dense(collection)
        if any(fused_here(s, dense.distance) for s in specs):
            return [
                (tuple(h.id for h in hits), tuple(h.score for h in hits))
                for hits in self.search(collection, specs)
            ]
        convert.check_specs(layout, dense, specs)
        requests = [
            edge_request(
                qe,
                replace(s, with_payload=False),
                Names(dense.name, layout.sparse_name, self._hnsw_ef),
            )
            for s in specs
        ]
        with self._use(collection) as shard:
            engine = shard.shard
            if len(requests) == 1:
                batches = [engine.query(requests[0])]
            else:
                batches = engine.query_batch(qe.QueryBatchRequest(requests))
        return [
            (convert.LazyIds(points), tuple(map(float, [p.score for p in points])))
            for points in batches
        ]

    def retrieve(
        self, collection: str, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[PointRecord]:
        if not ids:
            return []
        shard = self._open(collection)
        vname = self._vector_name(shard, with_vectors)
        pids = [convert.point_id(i) for i in ids]
        with self._use(collection) as shard:
            records = shard.shard.retrieve(pids, with_payload=True, with_vector=with_vectors)
        return [convert.to_record(r, vname, with_vectors) for r in records]

    def scroll(
        self,
        collection: str,
        *,
        batch_size: int = 256,
        with_vectors: bool = False,
        filter: FilterSpec | None = None,
    ) -> Iterator[list[PointRecord]]:
        import qdrant_edge as qe

        shard = self._open(collection)
        vname = self._vector_name(shard, with_vectors)
        offset: Any = None
        while True:
            with self._use(collection) as shard:
                records, offset = shard.shard.scroll(
                    qe.ScrollRequest(
                        offset=offset,
                        limit=batch_size,
                        filter=convert.to_filter(qe, filter),
                        with_payload=True,
                        with_vector=with_vectors,
                    )
                )
            if records:
                yield [convert.to_record(r, vname, with_vectors) for r in records]
            if offset is None or not records:
                return

    def count(self, collection: str, filter: FilterSpec | None = None) -> int:
        import qdrant_edge as qe

        request = qe.CountRequest(exact=True, filter=convert.to_filter(qe, filter))
        with self._use(collection) as shard:
            return int(shard.shard.count(request))
