"""The plain data that crosses the store interface (:mod:`ragsonde.models.store`): a search,
the points written and read back, the hits, and what a collection is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ragsonde.errors import DimensionMismatchError
from ragsonde.models.index import IndexConfig
from ragsonde.models.params import SearchParams
from ragsonde.models.scores import Distance

__all__ = [
    "CollectionInfo",
    "FilterSpec",
    "Hit",
    "PointRecord",
    "Ranked",
    "SearchSpec",
    "SparseVector",
    "hybrid_depth",
    "prefetch_depth",
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
    (:mod:`ragsonde.models.scores`)."""
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

    @property
    def dense_indexed(self) -> int:
        """Dense vectors in an HNSW graph. Qdrant counts indexed vectors over every named
        vector, and BM25 vectors are always indexed, so a hybrid collection's count includes one
        per point that a dense graph does not explain."""
        count = self.indexed_vectors_count
        if self.sparse_vector_name:
            count -= self.points_count
        return max(0, count)

    def search_index(self, mode: str, exact: bool) -> str:
        """How a search in ``mode`` finds its candidates here, in a few words (an eval report's
        ``search.index``): a collection under Qdrant's indexing threshold has no HNSW graph yet,
        and its searches scan every point, as exact search does."""
        if exact:
            return "exact (brute force)"
        if mode == "sparse":
            return "sparse inverted index"
        if self.index is None:
            return f"exact (brute force: {self.backend or 'this backend'} keeps no HNSW graph)"
        dense = self.dense_indexed
        if dense == 0:
            return "full scan (no HNSW graph: under Qdrant's indexing threshold)"
        if dense < self.points_count:
            return f"HNSW ({dense} of {self.points_count} points; the rest scanned)"
        return "HNSW"

    def require_dimension(self, dimension: int, made_by: str) -> None:
        """Vectors of ``dimension`` (made by ``made_by``, an embedder's name) must fit this
        collection: a mismatch would score every query 0, so it is a DimensionMismatchError."""
        if dimension != self.dimension:
            raise DimensionMismatchError(
                collection=self.name,
                collection_dim=self.dimension,
                embedder=made_by,
                embedder_dim=dimension,
            )

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
    become engine parameters in one place, the store's ``_convert``, which the ``tune`` sweep
    uses too.
    """

    vector: Sequence[float] | None
    limit: int
    filter: FilterSpec | None = None
    with_vectors: bool = False
    exact: bool = False
    mode: Literal["dense", "sparse", "hybrid"] = "dense"
    with_payload: bool = True
    """Read the hits' payloads (``False``: ids and scores only, as the traffic replay needs:
    the engine then reads no chunk text)."""
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
    """mode=hybrid: candidates per side (``None``: :func:`hybrid_depth`)."""

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


#: One ranking as ids and raw scores, best first (``Store.ranked``). The ids are a sequence, not
#: always a tuple: a store may read each when it is first asked for (the embedded store does,
#: :class:`ragsonde.store._convert.LazyIds`).
Ranked = tuple[Sequence[str], tuple[float, ...]]


@dataclass(frozen=True)
class PointRecord:
    """One point to write or as read back."""

    id: str
    vector: Sequence[float] | None
    payload: dict[str, Any]
    sparse: SparseVector | None = None


def hybrid_depth(limit: int) -> int:
    """How many candidates each side of a hybrid search hands to the fusion (by default)."""
    return max(limit * 4, 100)


def prefetch_depth(spec: SearchSpec) -> int:
    """The ``prefetch_limit`` setting, else :func:`hybrid_depth`."""
    return spec.prefetch_limit or hybrid_depth(spec.limit)
