"""The scale-out store: a Qdrant server or cluster through qdrant-client.

Used when ``QDRANT_URL`` is set. ``QDRANT_URL=:memory:`` runs qdrant-client's local mode (brute
force in Python: fine for tests, never a default). Every qdrant-client, httpx and grpc exception
is translated by type at this boundary (``QdrantClientStore._translate``, with the table in
:mod:`ragsonde.store._errors`).

A search needs the collection's vectors (their names and sizes). Asking the server for them on
every query would add two round trips (``collection_exists``, ``get_collection``) to each one, so
the store keeps each collection's :class:`~ragsonde.store._convert.VectorLayout` once read. This
store forgets it when it creates or deletes that collection; another client may change the
collection behind its back, so a search that fails with a cached layout (the collection gone, a
vector renamed or resized) reads the layout again and, if it changed, searches once more: the
caller gets the result, or the error the fresh layout gives (COLLECTION_NOT_FOUND with the names
that exist), never one caused by a stale layout.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from ragsonde.errors import CollectionNotFoundError, QueryValidationError, mask_secrets
from ragsonde.models.index import IndexConfig
from ragsonde.models.points import (
    CollectionInfo,
    FilterSpec,
    Hit,
    PointRecord,
    Ranked,
    SearchSpec,
    prefetch_depth,
)
from ragsonde.models.scores import Distance
from ragsonde.models.store import StoreSettings
from ragsonde.store import _convert as convert
from ragsonde.store._convert import DenseVector, VectorLayout
from ragsonde.store._errors import Where, client_table, translating
from ragsonde.store._fusion import SearchPlan

__all__ = ["QdrantClientStore"]

_UPSERT_BATCH = 256
#: Local mode keeps no payload indexes; we remember which were asked for in collection metadata.
_INDEX_META_KEY = "ragsonde_indexed_fields"


class QdrantClientStore:
    """A :class:`ragsonde.store.Store` over qdrant-client (server, or local mode).

    ``vector`` names the dense vector to search in collections that have several (the
    ``vector`` setting); unset, a collection's only dense vector is used.
    """

    def __init__(
        self,
        url: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 5.0,
        hnsw_ef: int | None = None,
        vector: str | None = None,
    ) -> None:
        from qdrant_client import QdrantClient

        self._url = url
        self._api_key = api_key
        self._hnsw_ef = hnsw_ef
        self._vector = vector
        self._local = url == ":memory:" or not url.startswith(("http://", "https://"))
        # The vectors of each collection as last read (see the module docstring). The server
        # shares one store between threads: the lock guards the map, and a read of the server
        # that started before an invalidation (``_generation`` moved on) is not kept.
        self._layouts: dict[str, VectorLayout] = {}
        self._layouts_lock = threading.Lock()
        self._generation = 0
        with self._translate(""):
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
    def from_settings(cls, settings: StoreSettings) -> QdrantClientStore:
        key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return cls(
            settings.qdrant_url or ":memory:",
            api_key=key,
            timeout_s=settings.qdrant_timeout_s,
            hnsw_ef=settings.search.hnsw_ef,
            vector=settings.vector,
        )

    @property
    def backend(self) -> str:
        return "qdrant-local" if self._local else "qdrant"

    def _translate(self, collection: str) -> AbstractContextManager[None]:
        """The error boundary: qdrant-client, httpx and grpc errors by type (see ``_errors``)."""
        where = Where(mask_secrets(self._url, [self._api_key]), collection, (self._api_key,))
        return translating(client_table(), where)

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
        distance: Distance = Distance.COSINE,
        index: IndexConfig | None = None,
    ) -> CollectionInfo:
        from qdrant_client import models as m

        if dimension < 1:
            raise QueryValidationError("Vector size must be at least 1.", field="dimension")
        with self._translate(name):
            if self._client.collection_exists(name):
                raise QueryValidationError(
                    f"Collection '{name}' already exists.", field="collection"
                )
            params = m.VectorParams(size=dimension, distance=m.Distance(Distance(distance).value))
            sparse = (
                {sparse_vector_name: m.SparseVectorParams(modifier=m.Modifier.IDF)}
                if sparse_vector_name
                else None
            )
            fields = dict(indexed_fields or {})
            # Local mode keeps plain vectors and warns about index settings: send it none.
            tuned = None if self._local else index
            self._client.create_collection(
                name,
                vectors_config={vector_name: params} if vector_name else params,
                sparse_vectors_config=sparse,
                metadata={_INDEX_META_KEY: json.dumps(fields)},
                quantization_config=tuned.quantization.client_config(m) if tuned else None,
                hnsw_config=tuned.hnsw.client_config(m) if tuned else None,
            )
            self._forget(name)
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
            self._forget(name)
            self._client.delete_collection(name)
        self._forget(name)  # again: a search may have read the layout while it was deleted

    def _forget(self, name: str) -> None:
        """Drop the cached layout of ``name``, and any read of it still on its way."""
        with self._layouts_lock:
            self._layouts.pop(name, None)
            self._generation += 1

    def _layout(self, name: str) -> tuple[VectorLayout, bool]:
        """The vectors of ``name``, and whether they came from the cache (may be stale)."""
        with self._layouts_lock:
            cached = self._layouts.get(name)
        if cached is not None:
            return cached, True
        return self._describe(name)[1], False

    def _describe(self, name: str) -> tuple[Any, VectorLayout]:
        """The collection's info from the server, and its vectors (cached for searches)."""
        with self._layouts_lock:
            generation = self._generation
        with self._translate(name):
            if not self._client.collection_exists(name):
                raise CollectionNotFoundError(name, available=self.list_collections())
            info = self._client.get_collection(name)
        params = info.config.params
        vectors = params.vectors
        named = vectors.items() if isinstance(vectors, Mapping) else [(None, vectors)]
        dense = tuple(
            DenseVector(
                name=vname or None,
                size=int(vp.size),
                distance=Distance(vp.distance.value),
                multivector=vp.multivector_config is not None,
            )
            for vname, vp in named
            if vp is not None
        )
        layout = VectorLayout(name, dense, tuple(params.sparse_vectors or {}))
        with self._layouts_lock:
            if self._generation == generation:
                self._layouts[name] = layout
        return info, layout

    def collection_info(self, name: str) -> CollectionInfo:
        info, layout = self._describe(name)
        dense = layout.choose(self._vector)
        indexed = {k: str(v.data_type.value) for k, v in (info.payload_schema or {}).items()}
        meta = getattr(info.config, "metadata", None) or {}
        if self._local and isinstance(meta.get(_INDEX_META_KEY), str):
            indexed = {**json.loads(meta[_INDEX_META_KEY]), **indexed}
        return CollectionInfo(
            name=name,
            dimension=dense.size,
            distance=dense.distance,
            points_count=int(info.points_count or 0),
            vector_name=dense.name,
            sparse_vector_name=layout.sparse_name,
            indexed_fields=indexed,
            indexed_vectors_count=int(info.indexed_vectors_count or 0),
            backend=self.backend,
            index=None if self._local else _index_of(info, dense.name),
        )

    def _vector_name(self, name: str, with_vectors: bool) -> str | None:
        """The dense vector to read back; payload-only reads work on any collection."""
        layout = self._describe(name)[1]
        return layout.choose(self._vector).name if with_vectors else None

    # -- writes ------------------------------------------------------------------------------
    def upsert(self, collection: str, points: Sequence[PointRecord]) -> None:
        from qdrant_client import models as m

        _, layout = self._describe(collection)
        dense = layout.choose(self._vector)
        for start in range(0, len(points), _UPSERT_BATCH):
            batch = []
            for p in points[start : start + _UPSERT_BATCH]:
                vectors: Any = convert.point_vectors(p, layout, dense, m.SparseVector)
                if list(vectors) == [""]:  # the unnamed vector alone: send it bare
                    vectors = vectors[""]
                pid = convert.point_id(p.id)
                batch.append(m.PointStruct(id=pid, vector=vectors, payload=p.payload))
            with self._translate(collection):
                self._client.upsert(collection, points=batch, wait=True)

    def delete_points(self, collection: str, ids: Sequence[str]) -> None:
        from qdrant_client import models as m

        if not ids:
            return
        selector = m.PointIdsList(points=[convert.point_id(i) for i in ids])
        with self._translate(collection):
            self._client.delete(collection, points_selector=selector, wait=True)

    def build_index(self, collection: str) -> None:
        """The server indexes by itself; this only checks the collection exists."""
        self.collection_info(collection)

    # -- reads -------------------------------------------------------------------------------
    def search(self, collection: str, specs: Sequence[SearchSpec]) -> list[list[Hit]]:
        """All ``specs`` in one round trip; a linear hybrid search is fused here
        (:class:`~ragsonde.store._fusion.SearchPlan`), its winners' payloads read in one more
        call. The collection's layout comes from the cache; see the module docstring for what
        happens when it went stale."""
        if not specs:
            return []
        layout, cached = self._layout(collection)
        try:
            return self._search(collection, specs, layout)
        except (CollectionNotFoundError, QueryValidationError):
            if not cached:
                raise
            self._forget(collection)
            fresh = self._describe(collection)[1]  # COLLECTION_NOT_FOUND (with names) if gone
            if fresh == layout:
                raise  # the layout was right: the error is the search's own
        return self._search(collection, specs, fresh)

    def ranked(self, collection: str, specs: Sequence[SearchSpec]) -> list[Ranked]:
        """:meth:`search`'s rankings as ids and scores (the server sends hits either way)."""
        return [
            (tuple(h.id for h in hits), tuple(h.score for h in hits))
            for hits in self.search(collection, specs)
        ]

    def _search(
        self, collection: str, specs: Sequence[SearchSpec], layout: VectorLayout
    ) -> list[list[Hit]]:
        from qdrant_client import models as m

        dense = layout.choose(self._vector)
        convert.check_specs(layout, dense, specs)
        plan = SearchPlan.build(
            specs,
            lambda s: self._request(m, s, dense.name, layout.sparse_name),
            lambda s: self._sides(m, s, dense.name, layout.sparse_name),
            dense.distance,
        )
        with self._translate(collection):
            responses = self._query(collection, plan.requests)

        def fetch(ids: list[Any], with_vectors: bool) -> list[Any]:
            with self._translate(collection):
                return list(
                    self._client.retrieve(
                        collection, ids=ids, with_payload=True, with_vectors=with_vectors
                    )
                )

        return plan.hits(responses, lambda p: convert.to_hit(p, dense.name), fetch, dense.name)

    def _query(self, collection: str, requests: Sequence[Any]) -> list[list[Any]]:
        """Each request's points. One request goes through ``query_points``: the same single
        round trip, but ``query_batch_points`` deep-copies every request first (1 ms for a
        384-d query in local mode)."""
        if len(requests) != 1:
            batch = self._client.query_batch_points(collection, requests=list(requests))
            return [r.points for r in batch]
        r = requests[0]
        response = self._client.query_points(
            collection,
            query=r.query,
            using=r.using,
            prefetch=r.prefetch,
            query_filter=r.filter,
            search_params=r.params,
            limit=r.limit,
            offset=r.offset,
            with_payload=r.with_payload,
            with_vectors=r.with_vector,
            score_threshold=r.score_threshold,
            lookup_from=r.lookup_from,
        )
        return [response.points]

    def _parts(self, m: Any, spec: SearchSpec) -> tuple[Any, Any, Any, Any]:
        """The search parameters, the filter, the dense and the BM25 query of ``spec``."""
        # Local mode is always exact and warns about search params: send none there. It keeps
        # plain vectors (no quantization), so a quantization knob cannot take effect: refuse it.
        if self._local:
            for name in ("quantization_rescore", "quantization_oversampling"):
                if getattr(spec, name) is not None:
                    raise QueryValidationError(
                        f"{name} cannot take effect on qdrant-client's local mode "
                        f"({self._url}), which has no quantization; remove it from the "
                        "settings, or search a Qdrant server or the embedded store.",
                        field=name,
                    )
        params = None if self._local else convert.spec_params(m, spec, self._hnsw_ef)
        flt = convert.to_filter(m, spec.filter)
        dense = [float(x) for x in spec.vector] if spec.vector is not None else None
        sparse = (
            m.SparseVector(indices=spec.sparse.indices, values=spec.sparse.values)
            if spec.sparse is not None
            else None
        )
        return params, flt, dense, sparse

    def _request(self, m: Any, spec: SearchSpec, vname: str | None, sparse_name: str | None) -> Any:
        params, flt, dense, sparse = self._parts(m, spec)
        common: dict[str, Any] = {
            "limit": spec.limit,
            "with_payload": spec.with_payload,
            "with_vector": spec.with_vectors,
            "filter": flt,
        }
        if spec.mode == "dense":
            return m.QueryRequest(query=dense, using=vname, params=params, **common)
        if spec.mode == "sparse":
            return m.QueryRequest(query=sparse, using=sparse_name, **common)
        depth = prefetch_depth(spec)
        return m.QueryRequest(
            prefetch=[
                m.Prefetch(query=dense, using=vname, limit=depth, filter=flt, params=params),
                m.Prefetch(query=sparse, using=sparse_name, limit=depth, filter=flt),
            ],
            query=convert.client_fusion(m, spec.fusion, spec.rrf_k, spec.fusion_weights),
            **common,
        )

    def _sides(
        self, m: Any, spec: SearchSpec, vname: str | None, sparse_name: str | None
    ) -> tuple[Any, Any]:
        """The dense and the BM25 candidates of a search fused here: ids and scores only."""
        params, flt, dense, sparse = self._parts(m, spec)
        bare: dict[str, Any] = {
            "limit": prefetch_depth(spec),
            "filter": flt,
            "with_payload": False,
            "with_vector": False,
        }
        return (
            m.QueryRequest(query=dense, using=vname, params=params, **bare),
            m.QueryRequest(query=sparse, using=sparse_name, **bare),
        )

    def retrieve(
        self, collection: str, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[PointRecord]:
        if not ids:
            return []
        vname = self._vector_name(collection, with_vectors)
        pids = [convert.point_id(i) for i in ids]
        with self._translate(collection):
            records = self._client.retrieve(
                collection, ids=pids, with_payload=True, with_vectors=with_vectors
            )
        return [convert.to_record(r, vname, with_vectors) for r in records]

    def scroll(
        self,
        collection: str,
        *,
        batch_size: int = 256,
        with_vectors: bool = False,
        filter: FilterSpec | None = None,
    ) -> Iterator[list[PointRecord]]:
        from qdrant_client import models as m

        vname = self._vector_name(collection, with_vectors)
        offset: Any = None
        while True:
            with self._translate(collection):
                records, offset = self._client.scroll(
                    collection,
                    scroll_filter=convert.to_filter(m, filter),
                    limit=batch_size,
                    offset=offset,
                    with_payload=True,
                    with_vectors=with_vectors,
                )
            if records:
                yield [convert.to_record(r, vname, with_vectors) for r in records]
            if offset is None or not records:
                return

    def count(self, collection: str, filter: FilterSpec | None = None) -> int:
        from qdrant_client import models as m

        self._describe(collection)
        flt = convert.to_filter(m, filter)
        with self._translate(collection):
            return int(self._client.count(collection, count_filter=flt, exact=True).count)

    def close(self) -> None:
        with self._translate(""):
            self._client.close()


def _index_of(info: Any, vector_name: str | None) -> IndexConfig:
    """The dense vector's quantization and HNSW graph: its own, else the collection's."""
    vectors = info.config.params.vectors
    params = vectors.get(vector_name or "") if isinstance(vectors, Mapping) else vectors

    def wire(*models: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for model in models:
            if model is not None:
                out |= model.model_dump(mode="json", exclude_none=True)
        return out

    own_q = getattr(params, "quantization_config", None)
    quantization = wire(own_q if own_q is not None else info.config.quantization_config)
    hnsw = wire(info.config.hnsw_config, getattr(params, "hnsw_config", None))
    return IndexConfig.from_wire(quantization or None, hnsw)
