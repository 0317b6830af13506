"""What an index variant is: quantization, HNSW, BM25 and search-time settings, as frozen models.

:mod:`ragsonde.store.variants` builds and searches variants from these; the tune grid lists them.
Each model turns itself into the matching ``qdrant_edge`` object (``engine_config``,
``engine_params``, ``engine_fusion``), so the engine's names live in one place.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ragsonde.store._convert import edge_fusion, search_params

__all__ = [
    "DEFAULT_FULL_SCAN_KB",
    "Bm25Params",
    "FusionSpec",
    "Hnsw",
    "Quantization",
    "SearchKnobs",
    "VariantSpec",
    "measurable",
]

#: Qdrant's default ``full_scan_threshold`` (KB of vectors): below it a search scans every point
#: and the HNSW graph is never used.
DEFAULT_FULL_SCAN_KB = 10_000

#: What each backend honours in production. qdrant-client's local mode keeps plain vectors in
#: Python: no quantization and no HNSW.
_HONOURS: dict[str, frozenset[str]] = {
    "edge": frozenset({"quantization", "hnsw"}),
    "qdrant": frozenset({"quantization", "hnsw"}),
    "qdrant-local": frozenset(),
}


def measurable(backend: str, knob: Literal["quantization", "hnsw"]) -> bool:
    """Whether ``backend`` would honour ``knob``, so that measuring it means something."""
    return knob in _HONOURS.get(backend, frozenset())


_Frozen = ConfigDict(frozen=True, extra="forbid")


class Quantization(BaseModel):
    """One quantization of the dense vectors (``kind="none"``: plain float32)."""

    model_config = _Frozen
    kind: Literal["none", "scalar", "binary", "product", "turbo"] = "none"
    bits: float | None = Field(
        default=None, description="binary: 1, 1.5 or 2; turbo: 1, 1.5, 2, 4 or 8"
    )
    query_encoding: Literal["default", "scalar8", "scalar4", "binary"] = Field(
        default="default", description="binary only: asymmetric query encoding"
    )
    compression: Literal[4, 8, 16, 32, 64] | None = Field(
        default=None, description="product only: float32 bytes / code bytes"
    )

    @model_validator(mode="after")
    def _check(self) -> Quantization:
        allowed = {"binary": {1.0, 1.5, 2.0}, "turbo": {1.0, 1.5, 2.0, 4.0, 8.0}}
        if self.kind in allowed and self.bits is not None and self.bits not in allowed[self.kind]:
            raise ValueError(f"{self.kind} bits must be one of {sorted(allowed[self.kind])}")
        if self.kind != "binary" and self.query_encoding != "default":
            raise ValueError("query_encoding applies to binary quantization only")
        if self.kind == "product" and self.compression is None:
            raise ValueError("product quantization needs compression (4, 8, 16, 32 or 64)")
        return self

    @property
    def label(self) -> str:
        if self.kind == "none":
            return "none"
        if self.kind == "scalar":
            return "int8"
        if self.kind == "product":
            return f"pq-x{self.compression}"
        bits = f"{self.bits or (1 if self.kind == 'binary' else 4):g}bit"
        enc = "" if self.query_encoding == "default" else f"-q{self.query_encoding}"
        return f"{self.kind}-{bits}{enc}"

    def engine_config(self, qe: Any) -> Any:
        """The ``qdrant_edge`` quantization config (``None`` for plain vectors)."""
        if self.kind == "none":
            return None
        if self.kind == "scalar":
            return qe.ScalarQuantizationConfig(qe.ScalarType.Int8, always_ram=True)
        if self.kind == "product":
            return qe.ProductQuantizationConfig(
                getattr(qe.CompressionRatio, f"X{self.compression}"), always_ram=True
            )
        if self.kind == "turbo":
            name = {1.0: "Bits1", 1.5: "Bits1_5", 2.0: "Bits2", 4.0: "Bits4", 8.0: "Bits8"}
            return qe.TurboQuantQuantizationConfig(
                always_ram=True, bits=getattr(qe.TurboQuantBitSize, name[self.bits or 4.0])
            )
        enc = {1.0: "OneBit", 1.5: "OneAndHalfBits", 2.0: "TwoBits"}[self.bits or 1.0]
        query = {
            "default": None,
            "scalar8": "Scalar8Bits",
            "scalar4": "Scalar4Bits",
            "binary": "Binary",
        }[self.query_encoding]
        return qe.BinaryQuantizationConfig(
            always_ram=True,
            encoding=getattr(qe.BinaryQuantizationEncoding, enc),
            query_encoding=getattr(qe.BinaryQuantizationQueryEncoding, query) if query else None,
        )


class Hnsw(BaseModel):
    """HNSW graph parameters (Qdrant's defaults: m=16, ef_construct=100)."""

    model_config = _Frozen
    m: int = Field(default=16, ge=2, le=128)
    ef_construct: int = Field(default=100, ge=4, le=2000)

    @property
    def label(self) -> str:
        return f"m{self.m}-efc{self.ef_construct}"


class Bm25Params(BaseModel):
    """BM25 term-frequency saturation ``k1`` and length normalisation ``b`` of the documents'
    sparse vectors (ragsonde ingests with k1=1.2, b=0.75)."""

    model_config = _Frozen
    k1: float = Field(default=1.2, gt=0, le=10)
    b: float = Field(default=0.75, ge=0, le=1)

    @property
    def label(self) -> str:
        return f"bm25-k{self.k1:g}-b{self.b:g}"


class VariantSpec(BaseModel):
    """How one temporary index variant is built.

    ``bm25``: the documents' BM25 vectors are re-encoded with these parameters (the caller
    passes them to :meth:`VariantBuilder.build`); ``None`` keeps the collection's own.
    """

    model_config = _Frozen
    quantization: Quantization = Quantization()
    hnsw: Hnsw = Hnsw()
    bm25: Bm25Params | None = None

    @property
    def label(self) -> str:
        bm25 = f"/{self.bm25.label}" if self.bm25 else ""
        return f"{self.quantization.label}/{self.hnsw.label}{bm25}"


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
    """How hybrid search fuses the dense and BM25 candidate lists inside Qdrant.

    ``rrf`` with ``weights`` is the weighted fusion: ``(dense, sparse)`` weights per list.
    """

    model_config = _Frozen
    method: Literal["rrf", "dbsf"] = "dbsf"
    k: int = Field(default=60, ge=1, le=1000)
    weights: tuple[float, float] | None = None
    prefetch: int = Field(default=100, ge=1, le=10_000)

    @property
    def label(self) -> str:
        if self.method == "dbsf":
            return f"dbsf/pf{self.prefetch}"
        w = f"/w{self.weights[0]:g}:{self.weights[1]:g}" if self.weights else ""
        return f"rrf-k{self.k}{w}/pf{self.prefetch}"

    def engine_fusion(self, qe: Any) -> Any:
        """The engine's fusion: the same translation the embedded store uses."""
        return edge_fusion(qe, self.method, self.k, self.weights)
