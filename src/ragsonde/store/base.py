"""The store interface, and the plain data that crosses it.

Two protocols: :class:`SearchStore` is what the retriever needs; :class:`Store` adds what
ingestion, ``inspect`` and evaluation need. Implementations (``edge.py``, ``client.py``) translate
their library's exceptions into :mod:`ragsonde.errors` inside every method: nothing else escapes.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from ragsonde.models.params import SearchParams
from ragsonde.store.index_spec import IndexConfig
from ragsonde.store.scores import Distance

if TYPE_CHECKING:
    from pydantic import SecretStr

__all__ = [
    "CollectionInfo",
    "FilterSpec",
    "Hit",
    "PointRecord",
    "SearchSpec",
    "SearchStore",
    "SparseVector",
    "Store",
    "StoreSettings",
]

#: Field path -> accepted values (any of). All fields must match (AND of ORs).
FilterSpec = Mapping[str, Sequence[str | int | bool]]


@dataclass(frozen=True)
class SparseVector:
    indices: list[int]
    values: list[float]


@dataclass(frozen=True)
class CollectionInfo:
    """What a collection is: sizes, vectors and payload indexes."""

    name: str
    dimension: int
    """The size of the dense vector searched (see ``vector_name``)."""
    distance: Distance
    """That vector's distance; it decides how a raw score becomes ``similarity_score``
    (:mod:`ragsonde.store.scores`)."""
    points_count: int
    vector_name: str | None = None
    """The dense vector searched: ``None`` for the unnamed (default) vector, else its name
    (the only dense vector, or the one the ``vector`` setting chose)."""
    sparse_vector_name: str | None = None
    """The BM25 sparse vector, when the collection has one (sparse and hybrid modes)."""
    indexed_fields: Mapping[str, str] = field(default_factory=dict)
    """Payload field -> index type (``keyword``, ``integer``, …)."""
    indexed_vectors_count: int = 0
    backend: str = ""
    index: IndexConfig | None = None
    """The dense vector's quantization and HNSW graph as the backend reports them; ``None``
    where it keeps neither (qdrant-client's local mode: plain vectors, brute force)."""

    def index_warnings(self, asked: IndexConfig | None) -> list[str]:
        """What this existing collection has other than the ``asked`` index settings (they
        apply only when a collection is created): one warning naming the difference, or none."""
        if asked is None:
            return []
        if self.index is None:
            return [
                f"Collection '{self.name}' is on {self.backend}, which keeps plain vectors: the "
                f"quantization and HNSW settings asked for ({asked.label}) are not measurable "
                "on this backend."
            ]
        diff = asked.differences(self.index)
        if not diff:
            return []
        return [
            f"Collection '{self.name}' already exists with {'; '.join(diff)}. Quantization and "
            "HNSW settings apply only when a collection is created: write into a new collection "
            "(or use `ragsonde tune --apply NAME`) to build one with them."
        ]


@dataclass(frozen=True)
class SearchSpec:
    """One search. ``mode`` picks which vectors score it.

    The search-time knobs (the settings of the same names; ``None`` = the engine's default)
    become engine parameters in one place, :mod:`ragsonde.store._convert`, which the ``tune``
    sweep uses too.
    """

    vector: Sequence[float] | None
    limit: int
    filter: FilterSpec | None = None
    with_vectors: bool = False
    exact: bool = False
    mode: Literal["dense", "sparse", "hybrid"] = "dense"
    sparse: SparseVector | None = None
    fusion: Literal["rrf", "dbsf", "linear"] = "rrf"
    hnsw_ef: int | None = None
    """HNSW search breadth (``None``: the store's own ``hnsw_ef``, else the engine's)."""
    quantization_rescore: bool | None = None
    quantization_oversampling: float | None = None
    quantization_ignore: bool = False
    """Search the full-precision vectors, not the quantized ones (``explain``'s relaxation)."""
    rrf_k: int | None = None
    """fusion=rrf: the k of 1/(k + rank)."""
    fusion_weights: tuple[float, float] | None = None
    """fusion=rrf: (dense, sparse) list weights; fusion=linear (required): score weights."""
    prefetch_limit: int | None = None
    """mode=hybrid: candidates per side (``None``: ``_convert.hybrid_depth``)."""

    @classmethod
    def of(
        cls,
        params: SearchParams,
        *,
        vector: Sequence[float] | None,
        sparse: SparseVector | None = None,
        filter: FilterSpec | None = None,
        with_vectors: bool = False,
        limit: int | None = None,
    ) -> SearchSpec:
        """One search as ``params`` describe it (``limit``: instead of ``params.top_k``). The
        one place a parameter model becomes a store search, for the retriever, tune and
        explain alike."""
        return cls(
            vector=vector,
            limit=params.top_k if limit is None else limit,
            filter=filter,
            with_vectors=with_vectors,
            exact=params.exact,
            mode=params.mode,
            sparse=sparse,
            fusion=params.fusion,
            hnsw_ef=params.hnsw_ef,
            quantization_rescore=params.quantization_rescore,
            quantization_oversampling=params.quantization_oversampling,
            rrf_k=params.rrf_k,
            fusion_weights=params.fusion_weights,
            prefetch_limit=params.prefetch_limit,
        )


@dataclass(frozen=True)
class Hit:
    """One scored point as the store returns it: id, raw score, payload, vector if asked."""

    id: str
    score: float
    payload: dict[str, Any]
    vector: list[float] | None = None


@dataclass(frozen=True)
class PointRecord:
    """One point to write or as read back."""

    id: str
    vector: Sequence[float] | None
    payload: dict[str, Any]
    sparse: SparseVector | None = None


@runtime_checkable
class StoreSettings(Protocol):
    """What opening a store reads from the settings. :class:`ragsonde.config.Settings` has every
    field (the store names them here instead of importing the settings, which sit above it)."""

    @property
    def home(self) -> Path: ...
    @property
    def qdrant_url(self) -> str | None: ...
    @property
    def qdrant_api_key(self) -> SecretStr | None: ...
    @property
    def qdrant_timeout_s(self) -> float: ...
    @property
    def vector(self) -> str | None: ...
    @property
    def search(self) -> SearchParams:
        """The search parameters: the store applies ``hnsw_ef`` where a search sets none."""
        ...

    @property
    def lock_wait_s(self) -> float: ...
    @property
    def server_idle_release_s(self) -> float: ...


class SearchStore(Protocol):
    """What the retriever needs."""

    @property
    def backend(self) -> str:
        """``edge`` or ``qdrant`` (server) or ``qdrant-local``."""
        ...

    def collection_info(self, name: str) -> CollectionInfo:
        """Describe ``name``; raise CollectionNotFoundError if it does not exist."""
        ...

    def search(self, collection: str, specs: Sequence[SearchSpec]) -> list[list[Hit]]:
        """Run all ``specs`` in one request; one hit list per spec, best first."""
        ...


@runtime_checkable
class Store(SearchStore, Protocol):
    """A whole store: collections, writes, reads."""

    def list_collections(self) -> list[str]: ...

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
        """Create a collection (cosine unless told) with indexes on ``indexed_fields``.

        ``index``: the dense vector's quantization and HNSW graph (``None``: the backend's
        defaults). A backend that keeps neither (qdrant-client's local mode) creates the
        collection all the same; its ``collection_info().index`` is then ``None``.
        """
        ...

    def delete_collection(self, name: str) -> None: ...

    def upsert(self, collection: str, points: Sequence[PointRecord]) -> None:
        """Insert or replace ``points`` (durable when this returns)."""
        ...

    def delete_points(self, collection: str, ids: Sequence[str]) -> None: ...

    def retrieve(
        self, collection: str, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[PointRecord]:
        """The points among ``ids`` that exist, in no particular order."""
        ...

    def scroll(
        self,
        collection: str,
        *,
        batch_size: int = 256,
        with_vectors: bool = False,
        filter: FilterSpec | None = None,
    ) -> Iterator[list[PointRecord]]:
        """Every point, in batches."""
        ...

    def count(self, collection: str, filter: FilterSpec | None = None) -> int: ...

    def build_index(self, collection: str) -> None:
        """Build the ANN index after bulk writes (a no-op where the backend does it itself)."""
        ...

    def close(self) -> None: ...
