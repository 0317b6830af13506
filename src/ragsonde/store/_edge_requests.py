"""The embedded store's engine requests, built from a :class:`~ragsonde.models.points.SearchSpec`:
the search parameters, the filter, the dense and the BM25 queries, and the request the engine
runs (or, for a search fused here, its two sides)."""

from __future__ import annotations

from typing import Any, NamedTuple

from ragsonde.models.points import SearchSpec, prefetch_depth
from ragsonde.store import _convert as convert

__all__ = ["Names", "edge_request", "edge_sides"]


class Names(NamedTuple):
    """What a request needs of its collection and store: the dense and the BM25 vectors'
    names, and the store's default ``hnsw_ef``."""

    dense: str | None
    sparse: str | None
    hnsw_ef: int | None


def _queries(qe: Any, spec: SearchSpec, names: Names) -> tuple[Any, Any, Any, Any]:
    """The search parameters, the filter, the dense and the BM25 query of ``spec``."""
    params = convert.spec_params(qe, spec, names.hnsw_ef)
    filt = convert.to_filter(qe, spec.filter)
    dense_q = (
        qe.Query.Nearest(list(map(float, spec.vector)), using=names.dense)
        if spec.vector is not None
        else None
    )
    sparse_q = (
        qe.Query.Nearest(
            qe.SparseVector(spec.sparse.indices, spec.sparse.values), using=names.sparse
        )
        if spec.sparse is not None
        else None
    )
    return params, filt, dense_q, sparse_q


def edge_request(qe: Any, spec: SearchSpec, names: Names) -> Any:
    """The engine's request for ``spec`` (Qdrant Edge's ``QueryRequest``, fused by the engine
    in hybrid mode)."""
    params, filt, dense_q, sparse_q = _queries(qe, spec, names)
    common = {
        "limit": spec.limit,
        "with_payload": spec.with_payload,
        "with_vector": spec.with_vectors,
    }
    if spec.mode == "dense":
        return qe.QueryRequest(query=dense_q, filter=filt, params=params, **common)
    if spec.mode == "sparse":
        return qe.QueryRequest(query=sparse_q, filter=filt, params=params, **common)
    fusion = convert.edge_fusion(qe, spec.fusion, spec.rrf_k, spec.fusion_weights)
    depth = prefetch_depth(spec)
    prefetches = [
        qe.Prefetch(limit=depth, query=dense_q, filter=filt, params=params),
        qe.Prefetch(limit=depth, query=sparse_q, filter=filt, params=params),
    ]
    return qe.QueryRequest(query=fusion, prefetches=prefetches, filter=filt, **common)


def edge_sides(qe: Any, spec: SearchSpec, names: Names) -> tuple[Any, Any]:
    """The dense and the BM25 candidates of a search fused here: ids and scores only."""
    params, filt, dense_q, sparse_q = _queries(qe, spec, names)
    bare = {
        "limit": prefetch_depth(spec),
        "filter": filt,
        "with_payload": False,
        "with_vector": False,
    }
    return (
        qe.QueryRequest(query=dense_q, params=params, **bare),
        qe.QueryRequest(query=sparse_q, **bare),
    )
