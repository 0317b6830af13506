"""The search and index parameters: one model each, with the same names on every surface.

:class:`SearchParams` is how one search runs (mode, fusion, HNSW breadth, quantization, threshold,
chunk aggregation); :class:`IndexParams` is how a collection is built (quantization, HNSW graph,
BM25). The same field names are used by

* ``Settings.search`` / ``Settings.index`` (``RAGSONDE_SEARCH__HNSW_EF``, ``[search]`` and
  ``[index]`` tables in ``ragsonde.toml``),
* the CLI flags (``--hnsw-ef``, ``--fusion``, …),
* HTTP bodies (``{"search": {"hnsw_ef": 128}}`` on ``/v1/query`` and ``/v1/eval``),
* tune's saved config, and every response and report (their ``search`` and ``index`` blocks).

Precedence, one rule everywhere: a call or flag > the environment > the config file > the
default. A layer overrides only the fields it *sets* (``model_fields_set``): an unset field
inherits from the layer below, and nothing is rebuilt from a full ``model_dump``
(:meth:`SearchParams.overlay`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

__all__ = [
    "MAX_FUSION_WEIGHT",
    "MIN_FUSION_WEIGHT",
    "SEARCH_FIELDS",
    "FusionMethod",
    "IndexParams",
    "SearchParams",
    "fusion_problem",
    "index_differences",
]

FusionMethod = Literal["rrf", "dbsf", "linear"]
SearchModeName = Literal["dense", "sparse", "hybrid"]

#: Fusion weights scale scores (at most 1 each side): 1e308 overflowed the fused score to inf,
#: 5e-324 underflowed every score to one value. Only the ratio ranks, so these lose nothing.
MAX_FUSION_WEIGHT = 1e6
MIN_FUSION_WEIGHT = 1e-6
_WEIGHTS_RULE = (  # the bounds as written in the docs (MAX_/MIN_FUSION_WEIGHT)
    "two finite weights (dense, sparse), each from 0 to 1e6, the larger at least 1e-6 (only "
    "their ratio ranks: scale them)"
)


def fusion_problem(
    fusion: str, rrf_k: int | None, weights: Sequence[float] | None
) -> tuple[str, str] | None:
    """The field at fault and why, when these fusion knobs do not go together (else ``None``):
    ``rrf_k`` is RRF's; ``fusion_weights`` weigh RRF's lists or linear's scores, and linear needs
    them. The one rule of the settings, the stores and the tune grid."""
    if rrf_k is not None and fusion != "rrf":
        return "rrf_k", (
            f"rrf_k applies to fusion 'rrf' only; this search fuses with '{fusion}'. "
            'Set fusion = "rrf" or remove rrf_k.'
        )
    if weights is None:
        if fusion == "linear":
            return "fusion_weights", (
                "fusion 'linear' scores w_dense * cosine + w_sparse * bm25 / max_bm25 (max_bm25: "
                "the best BM25 score among the query's BM25 candidates) and needs "
                "fusion_weights = [w_dense, w_sparse], e.g. [0.7, 0.3]."
            )
        return None
    if fusion not in ("rrf", "linear"):
        return "fusion_weights", (
            f"fusion_weights applies to fusion 'rrf' or 'linear' only; this search fuses with "
            f'\'{fusion}\'. Set fusion = "linear" or "rrf", or remove fusion_weights.'
        )
    # NaN passed both comparisons: a linear fusion of NaN scores ranks at random
    finite = all(map(math.isfinite, weights))
    if (
        len(weights) != 2
        or not finite
        or min(weights) < 0
        or not MIN_FUSION_WEIGHT <= max(weights) <= MAX_FUSION_WEIGHT
    ):
        return "fusion_weights", f"fusion_weights {list(weights)}: expected {_WEIGHTS_RULE}."
    return None


class _Params(BaseModel):
    # validate_default: the fusion rule holds for a default too (fusion "linear" alone lacks
    # its weights)
    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    def overlay(self, top: BaseModel | Mapping[str, Any] | None) -> Self:
        """This model with the fields ``top`` *sets* on top (a model's ``model_fields_set``, a
        mapping's keys; ``None`` values in a mapping are unset). Validated again as a whole, so
        a combination that does not hold (``rrf_k`` without RRF) is refused."""
        if top is None:
            return self
        if isinstance(top, BaseModel):
            changes = {k: getattr(top, k) for k in top.model_fields_set}
        else:
            changes = {k: v for k, v in top.items() if v is not None}
        if not changes:
            return self
        kept = {k: getattr(self, k) for k in self.model_fields_set}
        return type(self).model_validate({**kept, **changes})

    def overlay_given(self, top: object, field: str) -> Self:
        """:meth:`overlay` of what a library call was given as ``field``: a wrong type (a
        string) or a bad value is a VALIDATION_ERROR naming it (they were an AttributeError
        and pydantic's ValidationError)."""
        from ragsonde.errors import QueryValidationError
        from ragsonde.models.validation import options_error

        if top is not None and not isinstance(top, BaseModel | Mapping):
            raise QueryValidationError(
                f"{field} must be {type(self).__name__} or a dict, not {type(top).__name__}.",
                field=field,
            )
        try:
            return self.overlay(top)
        except ValidationError as e:
            raise options_error(e, f"{field}.") from e

    def set_fields(self) -> dict[str, Any]:
        """Only the fields given (for a saved config: what is not given keeps inheriting)."""
        return {k: getattr(self, k) for k in sorted(self.model_fields_set)}


class SearchParams(_Params):
    """How one search runs. ``None`` means "the engine's default" where it says so."""

    mode: SearchModeName = Field(
        default="dense",
        description="dense, sparse (BM25) or hybrid (both, fused).",
    )
    top_k: int = Field(
        default=5,
        ge=1,
        description="Results of a query that names no top_k (at most the deployment's max_top_k).",
    )
    score_threshold: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        allow_inf_nan=False,
        description="Keep results whose similarity_score >= this (queries that name none).",
    )
    fusion: FusionMethod = Field(
        default="dbsf",
        description="How mode=hybrid fuses dense and BM25: dbsf or rrf inside Qdrant (dbsf of a "
        "Euclid or Manhattan collection by ragsonde, Qdrant's reversing distances), or linear "
        "(w_dense * cosine + w_sparse * bm25 / max_bm25, 1/(1+d) in place of the cosine for a "
        "distance; fused by ragsonde; needs fusion_weights).",
    )
    rrf_k: int | None = Field(
        default=None, ge=1, le=1000, description="fusion=rrf: the k of 1/(k + rank); unset = 60."
    )
    fusion_weights: tuple[float, float] | None = Field(
        default=None,
        description="fusion=rrf: weights of the dense and BM25 lists; fusion=linear (required): "
        "the weights of the cosine and of bm25 / max_bm25, e.g. [0.7, 0.3].",
    )
    prefetch_limit: int | None = Field(
        default=None,
        ge=1,
        le=10_000,
        description="mode=hybrid: candidates per side handed to the fusion; unset = "
        "max(4 × top_k, 100).",
    )
    hnsw_ef: int | None = Field(
        default=None,
        ge=1,
        le=1_000_000,  # the engine takes a machine integer: 2**64 was an OverflowError (fuzzing)
        description="HNSW search breadth; unset = the engine's default.",
    )
    exact: bool = Field(
        default=False, description="Exact (brute-force) search instead of the HNSW index."
    )
    quantization_rescore: bool | None = Field(
        default=None,
        description="On a quantized collection: re-score candidates with the original vectors; "
        "unset = the engine's default (on).",
    )
    quantization_oversampling: float | None = Field(
        default=None,
        ge=1.0,
        le=16.0,
        description="On a quantized collection: fetch this many times top_k candidates before "
        "rescoring; unset = the engine's default (1).",
    )
    aggregation: Literal["max", "sum"] = Field(
        default="max",
        description="Evaluation by document: a document scores as its best chunk (max) or the "
        "sum of its aggregation_n best chunk scores (sum).",
    )
    aggregation_n: int = Field(
        default=1, ge=1, le=20, description="aggregation=sum: how many chunk scores are summed."
    )

    @field_validator("fusion_weights", mode="before")
    @classmethod
    def _weights_from_list(cls, value: Any) -> Any:
        """A JSON array is the pair's wire form: a body is validated strictly (a ``true``
        must not become 1.0), and strict validation takes no list for a tuple."""
        return tuple(value) if isinstance(value, list) else value

    @field_validator("rrf_k", "fusion_weights", mode="after")
    @classmethod
    def _check_fusion(cls, value: Any, info: ValidationInfo) -> Any:
        """The fusion knobs' one rule (:func:`fusion_problem`), reported under the field at
        fault (``search.rrf_k``): ``rrf_k`` is checked first, then ``fusion_weights``."""
        if "fusion" not in info.data:  # fusion itself is invalid: that error is enough
            return value
        rrf_k = value if info.field_name == "rrf_k" else None
        weights = value if info.field_name == "fusion_weights" else None
        problem = fusion_problem(info.data["fusion"], rrf_k, weights)
        if problem is not None and problem[0] == info.field_name:
            raise ValueError(problem[1])
        return value

    @property
    def fusion_label(self) -> str | None:
        """The fusion as one word (``dbsf``, ``rrf-k60/w1:0.5``, ``linear/w0.7:0.3``) for a
        hybrid search; ``None`` for the others."""
        if self.mode != "hybrid":
            return None
        k = f"-k{self.rrf_k}" if self.rrf_k is not None else ""
        w = (
            f"/w{self.fusion_weights[0]:g}:{self.fusion_weights[1]:g}"
            if self.fusion_weights
            else ""
        )
        pf = f"/pf{self.prefetch_limit}" if self.prefetch_limit is not None else ""
        return f"{self.fusion}{k}{w}{pf}"


class IndexParams(_Params):
    """How a collection is built. Applied only when ingest, push or ``tune --apply`` *creates* a
    collection; an existing collection keeps its own, and a difference is warned about."""

    quantization: str | None = Field(
        default=None,
        description="none, scalar (int8), binary (binary-1bit, binary-1.5bit, binary-2bit), "
        "product (pq-x4 … pq-x64), turbo (turbo-1bit … turbo-8bit); unset = none.",
    )
    hnsw_m: int | None = Field(default=None, ge=2, le=128, description="HNSW edges per node.")
    hnsw_ef_construct: int | None = Field(
        default=None, ge=4, le=2000, description="HNSW candidate list size while building."
    )
    bm25_k1: float | None = Field(
        default=None, gt=0, le=10, description="BM25 term-frequency saturation (default 1.2)."
    )
    bm25_b: float | None = Field(
        default=None, ge=0, le=1, description="BM25 length normalisation (default 0.75)."
    )
    bm25_title_weight: int | None = Field(
        default=None,
        ge=0,
        le=5,
        description="Extra times a chunk's title counts in its BM25 vector (default 0).",
    )
    bm25_language: str | None = Field(
        default=None,
        description="The language BM25 tokenizes in (stopwords, stemmer); default english.",
    )


_BUILT_BY = {
    "quantization": "ingest into a new collection, or `ragsonde tune --apply NAME`",
    "hnsw_m": "ingest into a new collection, or `ragsonde tune --apply NAME`",
    "hnsw_ef_construct": "ingest into a new collection, or `ragsonde tune --apply NAME`",
    "bm25_k1": "re-ingest with --sparse into a new collection, or `ragsonde tune --apply NAME`",
    "bm25_b": "re-ingest with --sparse into a new collection, or `ragsonde tune --apply NAME`",
    "bm25_title_weight": "re-ingest with --sparse into a new collection, or `ragsonde tune "
    "--apply NAME`",
    "bm25_language": "re-ingest with --sparse --bm25-language into a new collection",
}


def index_differences(asked: IndexParams, actual: IndexParams, collection: str) -> list[str]:
    """One warning per index parameter the settings *set* that ``collection`` was not built
    with, naming the command that would apply it; an empty list when they agree. A value the
    collection does not record (a backend without quantization, BM25 written by another
    pipeline) is said to be unknown, not assumed equal."""
    out: list[str] = []
    for name in sorted(asked.model_fields_set):
        want = getattr(asked, name)
        have = getattr(actual, name)
        if want is None or want == have:
            continue
        if have is None:
            out.append(
                f"index.{name} = {want!r} is set, but collection '{collection}' does not record "
                f"its {name} (not measurable here, or built by another pipeline): the results "
                "may not reflect it."
            )
            continue
        out.append(
            f"index.{name} = {want!r} is set, but collection '{collection}' was built with "
            f"{name} = {have!r}: index parameters apply only when a collection is built, so this "
            f"search runs with {have!r}. To apply it: {_BUILT_BY[name]}."
        )
    return out


#: Every search parameter's name (the CLI flags, the env names and the tests walk this).
SEARCH_FIELDS: tuple[str, ...] = tuple(SearchParams.model_fields)
