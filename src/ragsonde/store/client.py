"""The scale-out store: a Qdrant server or cluster through qdrant-client.

Used when ``QDRANT_URL`` is set. ``QDRANT_URL=:memory:`` runs qdrant-client's local mode (brute
force in Python: fine for tests, never a default). Every qdrant-client, httpx and grpc exception
is translated here, in :func:`_translate`, and nowhere else.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragsonde.config import Settings
from ragsonde.errors import (
    AuthError,
    CollectionNotFoundError,
    QueryValidationError,
    RagsondeError,
    StoreConnectionError,
    mask_secrets,
)
from ragsonde.store.base import (
    CollectionInfo,
    FilterSpec,
    Hit,
    PointRecord,
    SearchSpec,
    SparseVector,
)

if TYPE_CHECKING:
    from qdrant_client.models import VectorParams

__all__ = ["QdrantClientStore"]

_UPSERT_BATCH = 256
#: Local mode keeps no payload indexes; we remember which were asked for in collection metadata.
_INDEX_META_KEY = "ragsonde_indexed_fields"


def _status_of(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


class QdrantClientStore:
    """A :class:`ragsonde.store.Store` over qdrant-client (server, or local mode)."""

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 5.0,
        hnsw_ef: int | None = None,
    ) -> None:
        from qdrant_client import QdrantClient

        self._url = url
        self._api_key = api_key
        self._hnsw_ef = hnsw_ef
        self._local = url == ":memory:" or not url.startswith(("http://", "https://"))
        with self._translate("connect"):
            if url == ":memory:":
                self._client = QdrantClient(location=":memory:")
            elif self._local:
                self._client = QdrantClient(path=url.removeprefix("path:"))
            else:
                self._client = QdrantClient(
                    url=url,
                    api_key=api_key,
                    timeout=max(1, int(timeout_s)),
                    check_compatibility=False,
                )

    @classmethod
    def from_settings(cls, settings: Settings) -> QdrantClientStore:
        key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return cls(
            settings.qdrant_url or ":memory:",
            api_key=key,
            timeout_s=settings.qdrant_timeout_s,
            hnsw_ef=settings.hnsw_ef,
        )

    @property
    def backend(self) -> str:
        return "qdrant-local" if self._local else "qdrant"

    # -- the error boundary ----------------------------------------------------------------
    @contextlib.contextmanager
    def _translate(self, collection: str) -> Iterator[None]:
        try:
            yield
        except RagsondeError:
            raise
        except Exception as e:
            raise self._error(e, collection) from e

    def _error(self, e: Exception, collection: str) -> RagsondeError:
        where = mask_secrets(self._url, [self._api_key])
        msg = mask_secrets(str(e), [self._api_key])
        status = _status_of(e)
        if (
            status in (401, 403)
            or "unauthenticated" in msg.lower()
            or "permission denied" in msg.lower()
        ):
            return AuthError(
                f"Qdrant at {where} rejected the credentials (HTTP {status or 'auth'}). "
                "Check QDRANT_API_KEY."
            )
        lowered = msg.lower()
        if (
            status == 404
            or ("not found" in lowered and "collection" in lowered)
            or (isinstance(e, ValueError) and "not found" in lowered)
        ):
            return CollectionNotFoundError(collection)
        dim = re.search(r"expected dim(?:ension)?:? (\d+), got (\d+)", msg)
        if dim:
            return QueryValidationError(
                f"Vector of size {dim.group(2)} does not fit collection '{collection}' "
                f"(size {dim.group(1)}).",
                field="vector",
            )
        if status is not None and 400 <= status < 500:
            return QueryValidationError(f"Qdrant at {where} refused the request: {msg}")
        if isinstance(e, ValueError | TypeError | AssertionError) and self._local:
            return QueryValidationError(f"Qdrant local mode refused the request: {msg}")
        return StoreConnectionError(
            f"Cannot reach Qdrant at {where}: {msg or type(e).__name__}. Is the server running "
            "and QDRANT_URL right? Unset QDRANT_URL to use the embedded store."
        )

    # -- collections -------------------------------------------------------------------------
    def list_collections(self) -> list[str]:
        with self._translate(""):
            return sorted(c.name for c in self._client.get_collections().collections)

    def create_collection(
        self,
        name: str,
        dimension: int,
        *,
        vector_name: str | None = None,
        sparse_vector_name: str | None = None,
        indexed_fields: Mapping[str, str] | None = None,
    ) -> CollectionInfo:
        from qdrant_client import models as m

        if dimension < 1:
            raise QueryValidationError("Vector size must be at least 1.", field="dimension")
        with self._translate(name):
            if self._client.collection_exists(name):
                raise QueryValidationError(
                    f"Collection '{name}' already exists.", field="collection"
                )
            params = m.VectorParams(size=dimension, distance=m.Distance.COSINE)
            sparse = (
                {sparse_vector_name: m.SparseVectorParams(modifier=m.Modifier.IDF)}
                if sparse_vector_name
                else None
            )
            fields = dict(indexed_fields or {})
            self._client.create_collection(
                name,
                vectors_config={vector_name: params} if vector_name else params,
                sparse_vectors_config=sparse,
                metadata={_INDEX_META_KEY: json.dumps(fields)},
            )
            if not self._local:
                for field, kind in fields.items():
                    self._client.create_payload_index(
                        name, field, field_schema=m.PayloadSchemaType(kind), wait=True
                    )
        return self.collection_info(name)

    def delete_collection(self, name: str) -> None:
        with self._translate(name):
            if not self._client.collection_exists(name):
                raise CollectionNotFoundError(name, available=self.list_collections())
            self._client.delete_collection(name)

    def collection_info(self, name: str) -> CollectionInfo:
        with self._translate(name):
            if not self._client.collection_exists(name):
                raise CollectionNotFoundError(name, available=self.list_collections())
            info = self._client.get_collection(name)
        params = info.config.params
        vectors = params.vectors
        if isinstance(vectors, Mapping):
            if not vectors:
                raise QueryValidationError(f"Collection '{name}' has no dense vector.")
            first: str = next(iter(vectors))
            vname: str | None = first
            vp: VectorParams | None = vectors[first]
        else:
            vname, vp = None, vectors
        if vp is None:
            raise QueryValidationError(f"Collection '{name}' has no dense vector.")
        sparse = list(params.sparse_vectors or {})
        indexed = {k: str(v.data_type.value) for k, v in (info.payload_schema or {}).items()}
        meta = getattr(info.config, "metadata", None) or {}
        if self._local and isinstance(meta.get(_INDEX_META_KEY), str):
            indexed = {**json.loads(meta[_INDEX_META_KEY]), **indexed}
        return CollectionInfo(
            name=name,
            dimension=int(vp.size),
            distance=str(vp.distance.value),
            points_count=int(info.points_count or 0),
            vector_name=vname,
            sparse_vector_name=sparse[0] if sparse else None,
            indexed_fields=indexed,
            indexed_vectors_count=int(info.indexed_vectors_count or 0),
            backend=self.backend,
        )

    # -- writes ------------------------------------------------------------------------------
    def upsert(self, collection: str, points: Sequence[PointRecord]) -> None:
        from qdrant_client import models as m

        info = self.collection_info(collection)
        with self._translate(collection):
            for start in range(0, len(points), _UPSERT_BATCH):
                batch = []
                for p in points[start : start + _UPSERT_BATCH]:
                    if p.vector is None:
                        raise QueryValidationError(f"Point {p.id} has no vector.", field="vector")
                    dense = [float(x) for x in p.vector]
                    vector: Any = {info.vector_name: dense} if info.vector_name else dense
                    if p.sparse is not None:
                        if info.sparse_vector_name is None:
                            raise QueryValidationError(
                                f"Collection '{collection}' has no sparse vector.", field="sparse"
                            )
                        vector = {} if not info.vector_name else vector
                        vector[info.vector_name or ""] = dense
                        vector[info.sparse_vector_name] = m.SparseVector(
                            indices=p.sparse.indices, values=p.sparse.values
                        )
                    batch.append(m.PointStruct(id=_pid(p.id), vector=vector, payload=p.payload))
                self._client.upsert(collection, points=batch, wait=True)

    def delete_points(self, collection: str, ids: Sequence[str]) -> None:
        from qdrant_client import models as m

        if not ids:
            return
        with self._translate(collection):
            self._client.delete(
                collection, points_selector=m.PointIdsList(points=[_pid(i) for i in ids]), wait=True
            )

    def build_index(self, collection: str) -> None:
        """The server indexes by itself; this only checks the collection exists."""
        self.collection_info(collection)

    # -- reads -------------------------------------------------------------------------------
    def search(self, collection: str, specs: Sequence[SearchSpec]) -> list[list[Hit]]:
        from qdrant_client import models as m

        if not specs:
            return []
        info = self.collection_info(collection)
        requests = [self._request(m, s, info) for s in specs]
        with self._translate(collection):
            responses = self._client.query_batch_points(collection, requests=requests)
        return [[_hit(p, info.vector_name) for p in r.points] for r in responses]

    def _request(self, m: Any, spec: SearchSpec, info: CollectionInfo) -> Any:
        if spec.mode != "dense" and info.sparse_vector_name is None:
            raise QueryValidationError(
                f"Collection '{info.name}' was built for dense search only, so mode "
                f"'{spec.mode}' is not available. Re-ingest it with sparse (BM25) vectors, "
                "or use mode 'dense'.",
                field="mode",
            )
        # Local mode is always exact and warns about search params: send none there.
        params = None if self._local else m.SearchParams(exact=spec.exact, hnsw_ef=self._hnsw_ef)
        flt = _filter(m, spec.filter)
        dense = [float(x) for x in spec.vector] if spec.vector is not None else None
        sparse = (
            m.SparseVector(indices=spec.sparse.indices, values=spec.sparse.values)
            if spec.sparse is not None
            else None
        )
        common: dict[str, Any] = {
            "limit": spec.limit,
            "with_payload": True,
            "with_vector": spec.with_vectors,
            "filter": flt,
        }
        if spec.mode == "dense":
            return m.QueryRequest(query=dense, using=info.vector_name, params=params, **common)
        if spec.mode == "sparse":
            return m.QueryRequest(query=sparse, using=info.sparse_vector_name, **common)
        depth = max(spec.limit * 4, 100)
        fusion = m.Fusion.RRF if spec.fusion == "rrf" else m.Fusion.DBSF
        return m.QueryRequest(
            prefetch=[
                m.Prefetch(
                    query=dense, using=info.vector_name, limit=depth, filter=flt, params=params
                ),
                m.Prefetch(query=sparse, using=info.sparse_vector_name, limit=depth, filter=flt),
            ],
            query=m.FusionQuery(fusion=fusion),
            **common,
        )

    def retrieve(
        self, collection: str, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[PointRecord]:
        if not ids:
            return []
        info = self.collection_info(collection)
        with self._translate(collection):
            records = self._client.retrieve(
                collection, ids=[_pid(i) for i in ids], with_payload=True, with_vectors=with_vectors
            )
        return [_record(r, info.vector_name, with_vectors) for r in records]

    def scroll(
        self,
        collection: str,
        *,
        batch_size: int = 256,
        with_vectors: bool = False,
        filter: FilterSpec | None = None,
    ) -> Iterator[list[PointRecord]]:
        from qdrant_client import models as m

        info = self.collection_info(collection)
        offset: Any = None
        while True:
            with self._translate(collection):
                records, offset = self._client.scroll(
                    collection,
                    scroll_filter=_filter(m, filter),
                    limit=batch_size,
                    offset=offset,
                    with_payload=True,
                    with_vectors=with_vectors,
                )
            if records:
                yield [_record(r, info.vector_name, with_vectors) for r in records]
            if offset is None or not records:
                return

    def count(self, collection: str, filter: FilterSpec | None = None) -> int:
        from qdrant_client import models as m

        self.collection_info(collection)
        with self._translate(collection):
            return int(
                self._client.count(collection, count_filter=_filter(m, filter), exact=True).count
            )

    def close(self) -> None:
        with self._translate(""):
            self._client.close()


def _pid(value: str) -> int | str:
    if value.isdigit():
        return int(value)
    try:
        return str(uuid.UUID(value))
    except ValueError as e:
        raise QueryValidationError(
            f"Point id {value!r} is neither an unsigned integer nor a UUID "
            "(Qdrant accepts only those).",
            field="id",
        ) from e


def _filter(m: Any, spec: FilterSpec | None) -> Any:
    if not spec:
        return None
    must = []
    for key, values in spec.items():
        vals = list(values)
        match = m.MatchValue(value=vals[0]) if len(vals) == 1 else m.MatchAny(any=vals)
        must.append(m.FieldCondition(key=key, match=match))
    return m.Filter(must=must)


def _dense(vector: Any, vname: str | None) -> list[float] | None:
    if vector is None:
        return None
    if isinstance(vector, Mapping):
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
    if isinstance(vector, Mapping):
        for name, v in vector.items():
            if name != (vname or "") and hasattr(v, "indices"):
                return SparseVector([int(i) for i in v.indices], [float(x) for x in v.values])
    return None
