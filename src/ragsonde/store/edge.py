"""The embedded default store: Qdrant Edge, the real Qdrant engine in-process.

One Edge shard per collection, in ``<RAGSONDE_HOME>/collections/<name>/``. Nothing to start.
A shard can be open in one process at a time: ragsonde takes an exclusive lock file beside the
shard (holding the owner's pid and command) so a second process gets a clear error saying who
holds it. Within one process, stores share open shards (reference-counted), so several
retrievers on the same home work.

Every qdrant-edge exception (they are plain ``Exception`` with a message) and every OSError is
translated here, in :func:`_translate`, and nowhere else.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import sys
import threading
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ragsonde.errors import (
    CollectionNotFoundError,
    QueryValidationError,
    RagsondeError,
    StoreConnectionError,
)
from ragsonde.store.base import (
    CollectionInfo,
    FilterSpec,
    Hit,
    PointRecord,
    SearchSpec,
    SparseVector,
)

__all__ = ["EdgeStore", "validate_collection_name"]

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,254}$")
_LOCK_FILE = ".ragsonde.lock"
_UPSERT_BATCH = 512


def validate_collection_name(name: str) -> str:
    """Collection names become folder names: letters, digits, ``_ . -``, at most 255."""
    if not _NAME_RE.match(name) or ".." in name:
        raise QueryValidationError(
            f"Invalid collection name {name!r}: use letters, digits, '_', '.', '-' "
            "(at most 255 characters, starting with a letter or digit).",
            field="collection",
        )
    return name


@contextlib.contextmanager
def _translate(collection: str, path: Path) -> Iterator[None]:
    """Turn qdrant-edge and OS errors into ragsonde errors (ours pass through)."""
    try:
        yield
    except RagsondeError:
        raise
    except OSError as e:
        raise StoreConnectionError(
            f"The embedded store at {path} could not be used for collection '{collection}': "
            f"{e.strerror or e}. Check the folder exists and is writable (RAGSONDE_HOME)."
        ) from e
    except Exception as e:  # qdrant-edge raises plain Exception with a message
        msg = str(e)
        dim = re.search(r"expected dim: (\d+), got (\d+)", msg)
        if dim:
            raise QueryValidationError(
                f"Vector of size {dim.group(2)} does not fit collection '{collection}' "
                f"(size {dim.group(1)}).",
                field="vector",
            ) from e
        if "WouldBlock" in msg:
            raise StoreConnectionError(
                f"Collection '{collection}' at {path} is open in another process. "
                "Stop it, or query through it (ragsonde serve), or use a Qdrant server "
                "(QDRANT_URL) for concurrent access."
            ) from e
        if "does not exist" in msg:
            raise CollectionNotFoundError(collection) from e
        raise StoreConnectionError(
            f"The embedded Qdrant engine failed on collection '{collection}': {msg}"
        ) from e


def _point_id(value: str) -> int | uuid.UUID | str:
    if value.isdigit():
        return int(value)
    try:
        return uuid.UUID(value)
    except ValueError:
        return value


class _Shard:
    """One open Edge shard plus its lock file; shared within the process."""

    def __init__(
        self, name: str, path: Path, shard: Any, lock: IO[str], config: dict[str, Any]
    ) -> None:
        self.name = name
        self.path = path
        self.shard = shard
        self.lock = lock
        self.config = config
        self.refs = 0
        self.mutex = threading.Lock()

    def close(self) -> None:
        with _translate(self.name, self.path):
            self.shard.flush()
            self.shard.close()
        fcntl.flock(self.lock, fcntl.LOCK_UN)
        self.lock.close()


_OPEN: dict[Path, _Shard] = {}
_OPEN_LOCK = threading.Lock()


def _acquire_lock(name: str, path: Path) -> IO[str]:
    with _translate(name, path):
        path.mkdir(parents=True, exist_ok=True)
        fh = (path / _LOCK_FILE).open("a+", encoding="utf-8")
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as e:
        fh.seek(0)
        owner = fh.read().strip() or "unknown process"
        fh.close()
        raise StoreConnectionError(
            f"Collection '{name}' at {path} is held by another process ({owner}). Only one "
            "process can open an embedded collection at a time: stop that process, or send "
            "queries through it (`ragsonde serve` exposes an HTTP API), or use a Qdrant server "
            "(QDRANT_URL) for concurrent access."
        ) from e
    fh.seek(0)
    fh.truncate()
    fh.write(f"pid {os.getpid()}: {' '.join(sys.argv)[:200]}")
    fh.flush()
    return fh


@dataclass(frozen=True)
class _Layout:
    home: Path

    @property
    def root(self) -> Path:
        return self.home / "collections"

    def path(self, name: str) -> Path:
        return self.root / validate_collection_name(name)

    def exists(self, name: str) -> bool:
        return (self.path(name) / "edge_config.json").is_file()


class EdgeStore:
    """The embedded Qdrant Edge store (see the module docstring)."""

    def __init__(self, home: Path, *, hnsw_ef: int | None = None) -> None:
        self._layout = _Layout(Path(home))
        self._hnsw_ef = hnsw_ef
        self._mine: dict[Path, _Shard] = {}
        self._resolved: dict[str, Path] = {}

    @property
    def backend(self) -> str:
        return "edge"

    @property
    def home(self) -> Path:
        return self._layout.home

    # -- shard lifecycle -------------------------------------------------------------------
    def _open(self, name: str) -> _Shard:
        path = self._resolved.get(name)
        if path is None:  # resolving is a few syscalls: once per name, not once per query
            path = self._resolved[name] = self._layout.path(name).resolve()
        if path in self._mine:
            return self._mine[path]
        if not self._layout.exists(name):
            raise CollectionNotFoundError(name, available=self.list_collections())
        with _OPEN_LOCK:
            shard = _OPEN.get(path)
            if shard is None:
                shard = self._load(name, path)
                _OPEN[path] = shard
            shard.refs += 1
        self._mine[path] = shard
        return shard

    @staticmethod
    def _load(name: str, path: Path) -> _Shard:
        import qdrant_edge as qe

        lock = _acquire_lock(name, path)
        try:
            with _translate(name, path):
                config = json.loads((path / "edge_config.json").read_text(encoding="utf-8"))
                shard = qe.EdgeShard.load(str(path))
        except BaseException:
            lock.close()
            raise
        return _Shard(name, path, shard, lock, config)

    def _release(self, path: Path) -> None:
        shard = self._mine.pop(path, None)
        if shard is None:
            return
        with _OPEN_LOCK:
            shard.refs -= 1
            if shard.refs <= 0:
                _OPEN.pop(path, None)
                shard.close()

    def close(self) -> None:
        """Flush and release every shard this store opened."""
        for path in list(self._mine):
            self._release(path)

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
    ) -> CollectionInfo:
        import qdrant_edge as qe

        path = self._layout.path(name)
        if self._layout.exists(name):
            raise QueryValidationError(f"Collection '{name}' already exists.", field="collection")
        if dimension < 1:
            raise QueryValidationError("Vector size must be at least 1.", field="dimension")
        lock = _acquire_lock(name, path)
        with _translate(name, path):
            sparse = (
                {sparse_vector_name: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}
                if sparse_vector_name
                else None
            )
            config = qe.EdgeConfig(
                vectors={
                    vector_name or "": qe.EdgeVectorParams(
                        size=dimension, distance=qe.Distance.Cosine
                    )
                },
                sparse_vectors=sparse,
            )
            shard = qe.EdgeShard.create(str(path), config)
            schema = {
                "keyword": qe.PayloadSchemaType.Keyword,
                "integer": qe.PayloadSchemaType.Integer,
                "float": qe.PayloadSchemaType.Float,
                "bool": qe.PayloadSchemaType.Bool,
                "text": qe.PayloadSchemaType.Text,
                "datetime": qe.PayloadSchemaType.Datetime,
            }
            for field, kind in (indexed_fields or {}).items():
                if kind not in schema:
                    raise QueryValidationError(
                        f"Unknown index type {kind!r} for field '{field}': use one of "
                        f"{', '.join(sorted(schema))}.",
                        field="indexed_fields",
                    )
                shard.update(qe.UpdateOperation.create_field_index(field, schema[kind]))
            shard.flush()
            shard.close()
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()
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
        with _translate(name, path):
            shutil.rmtree(path)

    def collection_info(self, name: str) -> CollectionInfo:
        shard = self._open(name)
        with _translate(name, shard.path), shard.mutex:
            info = shard.shard.info()
            schema = {
                field: str(idx.data_type).rsplit(".", 1)[-1].lower()
                for field, idx in info.payload_schema.items()
            }
        vectors: dict[str, Any] = shard.config.get("vectors", {})
        vname, params = next(iter(vectors.items()))
        sparse = list(shard.config.get("sparse_vectors", {}))
        return CollectionInfo(
            name=name,
            dimension=int(params["size"]),
            distance=str(params.get("distance", "Cosine")),
            points_count=int(info.points_count),
            vector_name=vname or None,
            sparse_vector_name=sparse[0] if sparse else None,
            indexed_fields=schema,
            indexed_vectors_count=int(info.indexed_vectors_count),
            backend=self.backend,
        )

    # -- writes ------------------------------------------------------------------------------
    def upsert(self, collection: str, points: Sequence[PointRecord]) -> None:
        import qdrant_edge as qe

        shard = self._open(collection)
        vname = next(iter(shard.config.get("vectors", {"": None})))
        with _translate(collection, shard.path), shard.mutex:
            for start in range(0, len(points), _UPSERT_BATCH):
                batch = []
                for p in points[start : start + _UPSERT_BATCH]:
                    if p.vector is None:
                        raise QueryValidationError(f"Point {p.id} has no vector.", field="vector")
                    vector: dict[str, Any] = {vname: [float(x) for x in p.vector]}
                    if p.sparse is not None:
                        sparse_name = next(iter(shard.config.get("sparse_vectors", {})), None)
                        if sparse_name is None:
                            raise QueryValidationError(
                                f"Collection '{collection}' has no sparse vector.", field="sparse"
                            )
                        vector[sparse_name] = qe.SparseVector(p.sparse.indices, p.sparse.values)
                    batch.append(qe.Point(_point_id(p.id), vector, p.payload))
                shard.shard.update(qe.UpdateOperation.upsert_points(batch))

    def delete_points(self, collection: str, ids: Sequence[str]) -> None:
        import qdrant_edge as qe

        if not ids:
            return
        shard = self._open(collection)
        with _translate(collection, shard.path), shard.mutex:
            shard.shard.update(qe.UpdateOperation.delete_points([_point_id(i) for i in ids]))

    def build_index(self, collection: str) -> None:
        """Flush, then let the engine build HNSW and payload indexes (blocks until done)."""
        shard = self._open(collection)
        with _translate(collection, shard.path), shard.mutex:
            shard.shard.flush()
            shard.shard.optimize()
            shard.shard.flush()

    # -- reads -------------------------------------------------------------------------------
    def search(self, collection: str, specs: Sequence[SearchSpec]) -> list[list[Hit]]:
        import qdrant_edge as qe

        if not specs:
            return []
        shard = self._open(collection)
        info_vectors: dict[str, Any] = shard.config.get("vectors", {})
        vname = next(iter(info_vectors)) or None
        sparse_name = next(iter(shard.config.get("sparse_vectors", {})), None)
        requests = [self._request(qe, s, vname, sparse_name, collection) for s in specs]
        with _translate(collection, shard.path), shard.mutex:
            if len(requests) == 1:
                batches = [shard.shard.query(requests[0])]
            else:
                batches = shard.shard.query_batch(qe.QueryBatchRequest(requests))
        return [[_hit(p, vname) for p in points] for points in batches]

    def _request(
        self, qe: Any, spec: SearchSpec, vname: str | None, sparse_name: str | None, coll: str
    ) -> Any:
        params = qe.SearchParams(exact=spec.exact, hnsw_ef=self._hnsw_ef)
        filt = _filter(qe, spec.filter)
        if spec.mode != "dense" and sparse_name is None:
            raise QueryValidationError(
                f"Collection '{coll}' was built for dense search only, so mode "
                f"'{spec.mode}' is not available. Re-ingest it with sparse (BM25) vectors, "
                "or use mode 'dense'.",
                field="mode",
            )
        dense_q = (
            qe.Query.Nearest([float(x) for x in spec.vector], using=vname)
            if spec.vector is not None
            else None
        )
        sparse_q = (
            qe.Query.Nearest(
                qe.SparseVector(spec.sparse.indices, spec.sparse.values), using=sparse_name
            )
            if spec.sparse is not None
            else None
        )
        common = {"limit": spec.limit, "with_payload": True, "with_vector": spec.with_vectors}
        if spec.mode == "dense":
            return qe.QueryRequest(query=dense_q, filter=filt, params=params, **common)
        if spec.mode == "sparse":
            return qe.QueryRequest(query=sparse_q, filter=filt, params=params, **common)
        fusion = qe.Fusion.Rrf(k=60) if spec.fusion == "rrf" else qe.Fusion.Dbsf()
        depth = max(spec.limit * 4, 100)
        prefetches = [
            qe.Prefetch(limit=depth, query=dense_q, filter=filt, params=params),
            qe.Prefetch(limit=depth, query=sparse_q, filter=filt, params=params),
        ]
        return qe.QueryRequest(query=fusion, prefetches=prefetches, filter=filt, **common)

    def retrieve(
        self, collection: str, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[PointRecord]:
        if not ids:
            return []
        shard = self._open(collection)
        vname = next(iter(shard.config.get("vectors", {}))) or None
        with _translate(collection, shard.path), shard.mutex:
            records = shard.shard.retrieve(
                [_point_id(i) for i in ids], with_payload=True, with_vector=with_vectors
            )
        return [_record(r, vname, with_vectors) for r in records]

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
        vname = next(iter(shard.config.get("vectors", {}))) or None
        offset: Any = None
        while True:
            with _translate(collection, shard.path), shard.mutex:
                records, offset = shard.shard.scroll(
                    qe.ScrollRequest(
                        offset=offset,
                        limit=batch_size,
                        filter=_filter(qe, filter),
                        with_payload=True,
                        with_vector=with_vectors,
                    )
                )
            if records:
                yield [_record(r, vname, with_vectors) for r in records]
            if offset is None or not records:
                return

    def count(self, collection: str, filter: FilterSpec | None = None) -> int:
        import qdrant_edge as qe

        shard = self._open(collection)
        with _translate(collection, shard.path), shard.mutex:
            return int(shard.shard.count(qe.CountRequest(exact=True, filter=_filter(qe, filter))))


def _filter(qe: Any, spec: FilterSpec | None) -> Any:
    if not spec:
        return None
    must = []
    for key, values in spec.items():
        vals = list(values)
        match = qe.MatchValue(vals[0]) if len(vals) == 1 else qe.MatchAny(vals)
        must.append(qe.FieldCondition(key, match=match))
    return qe.Filter(must=must)


def _dense(vector: Any, vname: str | None) -> list[float] | None:
    if vector is None:
        return None
    if isinstance(vector, dict):
        v = vector.get(vname or "")
        return [float(x) for x in v] if isinstance(v, list) else None
    return [float(x) for x in vector]


def _hit(point: Any, vname: str | None) -> Hit:
    return Hit(
        id=str(point.id),
        score=float(point.score),
        payload=dict(point.payload or {}),
        vector=_dense(point.vector, vname),
    )


def _record(record: Any, vname: str | None, with_vectors: bool) -> PointRecord:
    return PointRecord(
        id=str(record.id),
        vector=_dense(record.vector, vname) if with_vectors else None,
        payload=dict(record.payload or {}),
        sparse=_sparse(record.vector, vname) if with_vectors else None,
    )


def _sparse(vector: Any, vname: str | None) -> SparseVector | None:
    """The BM25 vector of a record read back with its vectors, if it has one."""
    if isinstance(vector, dict):
        for name, v in vector.items():
            if name != (vname or "") and hasattr(v, "indices"):
                return SparseVector([int(i) for i in v.indices], [float(x) for x in v.values])
    return None
