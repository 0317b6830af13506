"""What a collection's index is built with: quantization, HNSW and BM25, as frozen models (a
search's knobs are a :class:`~ragsonde.models.params.SearchParams`, made into a store search by
``SearchSpec.of``).

:class:`IndexConfig` (quantization + HNSW) is what a store creates a collection with (``ingest
--quantization``, ``push``, ``tune --apply``) and what it reports back; :class:`Bm25Params` is
what ingest encodes the documents' BM25 vectors with. Tune's variants
(:class:`ragsonde.tune.variants.VariantSpec`) are built from these. Each model turns itself into
the matching ``qdrant_edge`` object (``engine_config``) and, for qdrant-client, into Qdrant's
wire form (``wire``, ``client_config``), read back by ``from_wire``: the engine's names live in
this module only. :data:`QUANTIZATIONS` names every quantization by its label (``int8``,
``binary-1.5bit``, ``pq-x16``, …), the one list the CLI and settings accept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "BM25_LANGUAGES",
    "DEFAULT_BM25_LANGUAGE",
    "DEFAULT_FULL_SCAN_KB",
    "QUANTIZATIONS",
    "Bm25Params",
    "Footprint",
    "Hnsw",
    "IndexConfig",
    "Quantization",
    "bm25_language_named",
    "measurable",
    "quantization_named",
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

    def wire(self) -> dict[str, Any] | None:
        """Qdrant's JSON form (the REST API's, and Edge's ``edge_config.json``); ``None``: plain."""
        if self.kind == "none":
            return None
        if self.kind == "scalar":
            return {"scalar": {"type": "int8", "always_ram": True}}
        if self.kind == "product":
            return {"product": {"compression": f"x{self.compression}", "always_ram": True}}
        if self.kind == "turbo":
            bits = {v: k for k, v in _TURBO_BITS.items()}[self.bits or 4.0]
            return {"turbo": {"always_ram": True, "bits": bits}}
        binary: dict[str, Any] = {
            "always_ram": True,
            "encoding": {v: k for k, v in _BINARY_BITS.items()}[self.bits or 1.0],
        }
        if self.query_encoding != "default":
            binary["query_encoding"] = {v: k for k, v in _QUERY_ENCODING.items()}[
                self.query_encoding
            ]
        return {"binary": binary}

    @classmethod
    def from_wire(cls, config: Mapping[str, Any] | None) -> Quantization:
        """The quantization a collection reports in Qdrant's JSON form (``None``: plain)."""
        if not config:
            return cls()
        kind, params = next(iter(config.items()))
        params = params or {}
        if kind == "scalar":
            return cls(kind="scalar")
        if kind == "product":
            return cls(kind="product", compression=int(str(params["compression"]).lstrip("x")))
        if kind == "turbo":
            bits = params.get("bits")
            return cls(kind="turbo", bits=_TURBO_BITS[bits] if bits else None)
        if kind == "binary":
            query = params.get("query_encoding") or "default"
            return cls(
                kind="binary",
                bits=_BINARY_BITS[params.get("encoding") or "one_bit"],
                query_encoding=_QUERY_ENCODING.get(query, "default"),
            )
        raise ValueError(f"unknown quantization {kind!r}")

    def client_config(self, m: Any) -> Any:
        """The qdrant-client model (``m``: ``qdrant_client.models``), from the wire form."""
        from pydantic import TypeAdapter

        wire = self.wire()
        return None if wire is None else TypeAdapter(m.QuantizationConfig).validate_python(wire)


_BINARY_BITS = {"one_bit": 1.0, "one_and_half_bits": 1.5, "two_bits": 2.0}
_TURBO_BITS = {"bits1": 1.0, "bits1_5": 1.5, "bits2": 2.0, "bits4": 4.0, "bits8": 8.0}
_QUERY_ENCODING = {
    "default": "default",
    "scalar8bits": "scalar8",
    "scalar4bits": "scalar4",
    "binary": "binary",
}


def _all_quantizations() -> dict[str, Quantization]:
    out = [Quantization(), Quantization(kind="scalar")]
    out += [
        Quantization(kind="binary", bits=b, query_encoding=q)
        for b in _BINARY_BITS.values()
        for q in _QUERY_ENCODING.values()
    ]
    out += [Quantization(kind="product", compression=c) for c in (4, 8, 16, 32, 64)]
    out += [Quantization(kind="turbo", bits=b) for b in _TURBO_BITS.values()]
    named = {q.label: q for q in out}
    # the kinds alone, as the issue names them: Qdrant's usual choice of each
    named |= {
        "scalar": named["int8"],
        "binary": named["binary-1bit"],
        "product": named["pq-x16"],
        "turbo": named["turbo-4bit"],
    }
    return named


#: Every quantization by name: its :attr:`Quantization.label`, or a kind alone (``scalar``,
#: ``binary``, ``product``, ``turbo``).
QUANTIZATIONS: dict[str, Quantization] = _all_quantizations()


def quantization_named(name: str) -> Quantization:
    """The :data:`QUANTIZATIONS` entry ``name``; ValueError listing the names otherwise."""
    try:
        return QUANTIZATIONS[name.strip().lower()]
    except KeyError:
        raise ValueError(
            f"unknown quantization {name!r}: use one of {', '.join(QUANTIZATIONS)}"
        ) from None


class Hnsw(BaseModel):
    """HNSW graph parameters (Qdrant's defaults: m=16, ef_construct=100)."""

    model_config = _Frozen
    m: int = Field(default=16, ge=2, le=128)
    ef_construct: int = Field(default=100, ge=4, le=2000)

    @property
    def label(self) -> str:
        return f"m{self.m}-efc{self.ef_construct}"

    def engine_config(self, qe: Any, full_scan_threshold: int = DEFAULT_FULL_SCAN_KB) -> Any:
        return qe.HnswIndexConfig(
            m=self.m, ef_construct=self.ef_construct, full_scan_threshold=full_scan_threshold
        )

    def client_config(self, m: Any) -> Any:
        return m.HnswConfigDiff(m=self.m, ef_construct=self.ef_construct)


#: The languages the engine's BM25 tokenizes (``qdrant_edge.Language``'s members, lower-cased,
#: as ``Bm25Config(language=...)`` and Qdrant's server-side BM25 name them): each brings its
#: stopwords and Snowball stemmer. Kept here so that validating one does not import the engine;
#: a test checks the tuple against ``qdrant_edge.Language``.
BM25_LANGUAGES: tuple[str, ...] = (
    "arabic",
    "azerbaijani",
    "basque",
    "bengali",
    "catalan",
    "chinese",
    "danish",
    "dutch",
    "english",
    "finnish",
    "french",
    "german",
    "greek",
    "hebrew",
    "hinglish",
    "hungarian",
    "indonesian",
    "italian",
    "japanese",
    "kazakh",
    "nepali",
    "norwegian",
    "portuguese",
    "romanian",
    "russian",
    "slovene",
    "spanish",
    "swedish",
    "tajik",
    "turkish",
)
#: The engine's default, and what a collection that records no language was encoded with.
DEFAULT_BM25_LANGUAGE = "english"


def bm25_language_named(name: str) -> str:
    """The :data:`BM25_LANGUAGES` entry ``name`` (any case); ValueError listing them otherwise."""
    language = name.strip().lower()
    if language not in BM25_LANGUAGES:
        raise ValueError(
            f"unsupported BM25 language {name!r}: use one of {', '.join(BM25_LANGUAGES)}"
        )
    return language


class Bm25Params(BaseModel):
    """BM25 term-frequency saturation ``k1`` and length normalisation ``b`` of the documents'
    sparse vectors (ragsonde ingests with k1=1.2, b=0.75), ``title_weight``: how many extra
    times a chunk's title is counted in its vector, a BM25F-style field boost (0: none), and
    ``language``: whose stopwords and stemmer tokenize documents and queries alike."""

    model_config = _Frozen
    k1: float = Field(default=1.2, gt=0, le=10)
    b: float = Field(default=0.75, ge=0, le=1)
    title_weight: int = Field(default=0, ge=0, le=5)
    language: str = DEFAULT_BM25_LANGUAGE

    @field_validator("language")
    @classmethod
    def _check_language(cls, value: str) -> str:
        return bm25_language_named(value)

    @property
    def label(self) -> str:
        # no title part at 0 and no language part for English, so that ids and reports of
        # earlier sweeps keep their names
        title = f"-t{self.title_weight}" if self.title_weight else ""
        language = f"-{self.language}" if self.language != DEFAULT_BM25_LANGUAGE else ""
        return f"bm25-k{self.k1:g}-b{self.b:g}{title}{language}"

    @classmethod
    def from_label(cls, label: str) -> Bm25Params | None:
        """The parameters a :attr:`label` records (``bm25-k0.9-b0.4-t2``); ``None`` for a string
        that is not such a label."""
        language = cls.language_of_label(label)
        if language is None:
            return None
        fields: dict[str, Any] = {"language": language}
        for part in label.removeprefix("bm25-").split("-"):
            try:
                if part[:1] == "k":
                    fields["k1"] = float(part[1:])
                elif part[:1] == "b":
                    fields["b"] = float(part[1:])
                elif part[:1] == "t":
                    fields["title_weight"] = int(part[1:])
            except ValueError:
                return None
        try:
            return cls(**fields)
        except ValueError:
            return None

    @classmethod
    def recorded_in(cls, payload: Mapping[str, Any]) -> Bm25Params | None:
        """The parameters a chunk's payload records: its ``bm25`` label's, the defaults for a
        chunk ragsonde ingested with them (an ``embed_hash`` and no label), ``None`` for a chunk
        another pipeline wrote (it records nothing)."""
        label = payload.get("bm25")
        if isinstance(label, str):
            params = cls.from_label(label)
            if params is not None:
                return params
        return cls() if "embed_hash" in payload else None

    @staticmethod
    def language_of_label(label: str) -> str | None:
        """The language a :attr:`label` records (its last part when that names one; English
        otherwise: labels without a language part are English); ``None`` for a string that is
        not such a label (another pipeline's own ``bm25`` field, say)."""
        if not label.startswith("bm25-k"):  # how :attr:`label` begins
            return None
        last = label.rsplit("-", 1)[-1]
        return last if last in BM25_LANGUAGES else DEFAULT_BM25_LANGUAGE


@dataclass(frozen=True)
class Footprint:
    """What a built collection holds on disk (the embedded store reads it off its files)."""

    disk_bytes: int
    """Allocated bytes of every file but the write-ahead log."""
    quantized_bytes: int
    """Bytes of the dense vector's quantized codes (0: none were written)."""
    index_bytes: int
    """Bytes of the dense vector's HNSW graph."""


class IndexConfig(BaseModel):
    """How a collection's dense vectors are indexed: quantization and HNSW graph.

    A store creates a collection with one (``Store.create_collection(index=...)``) and reports
    the one in effect (``CollectionInfo.index``). The fields a caller set explicitly
    (``model_fields_set``) are what :meth:`differences` compares: an unset field asks for nothing.
    """

    model_config = _Frozen
    quantization: Quantization = Quantization()
    hnsw: Hnsw = Hnsw()

    @property
    def label(self) -> str:
        return f"{self.quantization.label}/{self.hnsw.label}"

    def edge_vector_params(
        self, qe: Any, size: int, distance: Any, full_scan_threshold: int = DEFAULT_FULL_SCAN_KB
    ) -> Any:
        """Edge's dense vector params; quantized originals stay on disk (the codes in RAM)."""
        return qe.EdgeVectorParams(
            size=size,
            distance=distance,
            on_disk=self.quantization.kind != "none",
            quantization_config=self.quantization.engine_config(qe),
            hnsw_config=self.hnsw.engine_config(qe, full_scan_threshold),
        )

    @classmethod
    def from_wire(
        cls, quantization: Mapping[str, Any] | None, hnsw: Mapping[str, Any] | None
    ) -> IndexConfig:
        """From Qdrant's JSON form of both (an absent HNSW config: Qdrant's defaults)."""
        graph = {k: hnsw[k] for k in ("m", "ef_construct") if hnsw and hnsw.get(k) is not None}
        return cls(quantization=Quantization.from_wire(quantization), hnsw=Hnsw(**graph))

    def differences(self, actual: IndexConfig) -> list[str]:
        """What ``actual`` has other than the fields set here, e.g. ``quantization: none, not
        int8``."""
        out: list[str] = []
        if "quantization" in self.model_fields_set and actual.quantization != self.quantization:
            out.append(f"quantization: {actual.quantization.label}, not {self.quantization.label}")
        if "hnsw" in self.model_fields_set:
            for name in sorted(self.hnsw.model_fields_set):
                want, have = getattr(self.hnsw, name), getattr(actual.hnsw, name)
                if want != have:
                    out.append(f"hnsw {name}: {have}, not {want}")
        return out
