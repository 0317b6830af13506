"""Search-time settings of a tune configuration, as frozen models: :class:`SearchKnobs` (per-query
parameters) and :class:`FusionSpec` (how hybrid search fuses). Each turns itself into the engine's
object through :mod:`ragsonde.store._convert`, the translation the stores use too, so the sweep
measures what ``query``/``eval``/``serve`` then run. (Kept apart from
:mod:`ragsonde.store.index_spec`, the build-time specs, which :mod:`ragsonde.store.base` names.)
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragsonde.store._convert import edge_fusion, fusion_problem, search_params

__all__ = ["FusionSpec", "SearchKnobs"]

_Frozen = ConfigDict(frozen=True, extra="forbid")


class SearchKnobs(BaseModel):
    """Per-query search parameters."""

    model_config = _Frozen
    hnsw_ef: int | None = Field(default=None, ge=1)
    exact: bool = False
    rescore: bool | None = None
    oversampling: float | None = Field(default=None, ge=1.0, le=16.0)
    ignore_quantization: bool = False

    def engine_params(self, qe: Any) -> Any:
        """The engine's ``SearchParams``: the same translation the stores use."""
        return search_params(
            qe,
            hnsw_ef=self.hnsw_ef,
            exact=self.exact,
            rescore=self.rescore,
            oversampling=self.oversampling,
            ignore_quantization=self.ignore_quantization,
        )


class FusionSpec(BaseModel):
    """How hybrid search fuses the dense and BM25 candidate lists (``prefetch`` per side).

    ``rrf`` and ``dbsf`` are fused inside Qdrant; ``rrf`` with ``weights`` is the weighted fusion:
    ``(dense, sparse)`` weights per list. ``linear`` (``weights`` required) is the convex
    combination with theoretical min-max normalisation (TM2C2, Bruch et al. 2023):
    ``w_dense * cosine + w_sparse * bm25 / max_bm25``, ``max_bm25`` the best BM25 score of the
    query's BM25 candidates; Qdrant cannot see a list's maximum, so ragsonde fuses it from the
    two lists (:func:`~ragsonde.store._fusion.fuse_linear`), on the embedded store and on a
    server alike. ``k`` is RRF's alone.
    """

    model_config = _Frozen
    method: Literal["rrf", "dbsf", "linear"] = "dbsf"
    k: int = Field(default=60, ge=1, le=1000)
    weights: tuple[float, float] | None = None
    prefetch: int = Field(default=100, ge=1, le=10_000)

    @model_validator(mode="after")
    def _check(self) -> FusionSpec:
        problem = fusion_problem(self.method, None, self.weights)
        if problem is not None:
            raise ValueError(problem[1])
        return self

    @property
    def label(self) -> str:
        if self.method == "dbsf":
            return f"dbsf/pf{self.prefetch}"
        w = f"/w{self.weights[0]:g}:{self.weights[1]:g}" if self.weights else ""
        if self.method == "linear":
            return f"linear{w}/pf{self.prefetch}"
        return f"rrf-k{self.k}{w}/pf{self.prefetch}"

    def engine_fusion(self, qe: Any) -> Any:
        """The engine's fusion (``rrf``, ``dbsf``): the same translation the embedded store
        uses. ``linear`` has none: it is fused by ragsonde."""
        return edge_fusion(qe, self.method, self.k, self.weights)
