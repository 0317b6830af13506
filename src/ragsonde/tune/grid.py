"""The grid a sweep covers: index variants, per-query search knobs, fusions and aggregations.

A :class:`Grid` lists values per axis; :meth:`Grid.variants` and :meth:`Grid.dense_searches`
expand it into what is built and searched. Every search is a
:class:`~ragsonde.models.params.SearchParams`, the model ``query``, ``eval`` and ``serve`` run
and tune's saved config writes, so a grid point and the setting that reproduces it are spelled
alike. Index variants are the costly
part (each is a full copy with its own HNSW graph), so by default they are not a full cross
product: every quantization is built on the first HNSW setting, and every other HNSW setting on
the first quantization (``cross = true`` builds them all). A custom grid comes from a TOML or YAML
file (``--grid FILE``) with the same keys::

    quantization = [{kind = "none"}, {kind = "binary", bits = 2, query_encoding = "scalar8"}]
    hnsw = [{m = 16, ef_construct = 100}]
    hnsw_ef = [64, 128]
    fusion = [{fusion = "dbsf", prefetch_limit = 100},
              {fusion = "linear", fusion_weights = [0.7, 0.3]}]
    bm25 = [{k1 = 0.9, b = 0.4}, {k1 = 0.9, b = 0.4, title_weight = 2}]

A ``fusion`` entry takes the hybrid-search names of ``[search]`` (``fusion``, ``rrf_k``,
``fusion_weights``, ``prefetch_limit``; :data:`FUSION_PREFETCH` candidates per side when it sets
none). The names of earlier releases (``method``, ``k``, ``weights``, ``prefetch``) are read with
a :class:`GridNameWarning`.
"""

from __future__ import annotations

import tomllib
import warnings
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.aggregation import Aggregation
from ragsonde.inputs import MAX_SETTINGS_BYTES, not_a_file, read_bytes
from ragsonde.models.keys import check_keys
from ragsonde.models.params import SearchParams
from ragsonde.models.text import check_json, not_utf8
from ragsonde.tune.variants import Bm25Params, Hnsw, Quantization, VariantSpec

__all__ = [
    "DEFAULT_GRID",
    "FUSION_PREFETCH",
    "Aggregation",
    "Grid",
    "GridNameWarning",
    "hybrid",
    "load_grid",
]

#: Candidates per side of a grid fusion that sets no ``prefetch_limit``.
FUSION_PREFETCH = 100
#: A fusion entry's names of earlier releases -> the ``[search]`` names.
_OLD_FUSION_NAMES = {
    "method": "fusion",
    "k": "rrf_k",
    "weights": "fusion_weights",
    "prefetch": "prefetch_limit",
}


class GridNameWarning(FutureWarning):
    """A grid file's fusion entry spelled with an earlier release's names."""


def hybrid(fusion: str, *, prefetch: int = FUSION_PREFETCH, **knobs: Any) -> SearchParams:
    """One hybrid search of the grid: ``fusion`` with ``prefetch`` candidates per side, and
    ``knobs`` (``rrf_k``, ``fusion_weights``) as :class:`SearchParams` names."""
    return SearchParams(mode="hybrid", fusion=fusion, prefetch_limit=prefetch, **knobs)


def _renamed(entry: Any) -> Any:
    if not isinstance(entry, dict):
        return entry
    old = [k for k in entry if k in _OLD_FUSION_NAMES]
    if old:
        warnings.warn(
            "grid fusion entries take the [search] names now: "
            + ", ".join(f"{k} -> {_OLD_FUSION_NAMES[k]}" for k in old),
            GridNameWarning,
            stacklevel=2,
        )
    return {_OLD_FUSION_NAMES.get(k, k): v for k, v in entry.items()}


class Grid(BaseModel):
    """Values to sweep, axis by axis (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    quantization: list[Quantization] = Field(min_length=1)
    hnsw: list[Hnsw] = Field(min_length=1)
    hnsw_ef: list[int] = Field(min_length=1)
    rescore: list[bool] = Field(default=[True, False], min_length=1)
    oversampling: list[float] = Field(default=[1.0], min_length=1)
    fusion: list[SearchParams] = Field(
        default_factory=list, description="hybrid searches: fusion, rrf_k, fusion_weights, …"
    )
    bm25: list[Bm25Params] = Field(
        default_factory=list, description="BM25 k1/b to re-encode documents with (hybrid only)"
    )
    aggregation: list[Aggregation] = Field(default=[Aggregation()], min_length=1)
    cross: bool = False
    limit: int = Field(default=100, ge=10, le=1000, description="chunks fetched per query")

    @field_validator("fusion", mode="before")
    @classmethod
    def _hybrid(cls, value: Any) -> Any:
        """Each entry is a hybrid search with its candidates per side set (old names read)."""
        if not isinstance(value, list):
            return value
        out = []
        for entry in value:
            if isinstance(entry, SearchParams):
                entry = entry.set_fields()
            entry = _renamed(entry)
            if isinstance(entry, dict):
                entry = {"mode": "hybrid", "prefetch_limit": FUSION_PREFETCH} | entry
            out.append(entry)
        return out

    @field_validator("fusion", mode="after")
    @classmethod
    def _only_hybrid(cls, value: list[SearchParams]) -> list[SearchParams]:
        for n, search in enumerate(value):
            if search.mode != "hybrid":
                raise ValueError(f"fusion entry {n} is a hybrid search: remove its mode")
        return value

    def variants(self) -> list[VariantSpec]:
        """Index variants to build; the first is the reference (first quantization and HNSW)."""
        if self.cross:
            pairs = [(q, h) for q in self.quantization for h in self.hnsw]
        else:
            pairs = [(q, self.hnsw[0]) for q in self.quantization]
            pairs += [(self.quantization[0], h) for h in self.hnsw[1:]]
        seen: dict[str, VariantSpec] = {}
        for q, h in pairs:
            spec = VariantSpec(quantization=q, hnsw=h)
            seen.setdefault(spec.label, spec)
        return list(seen.values())

    def bm25_variants(self) -> list[VariantSpec]:
        """Hybrid-only variants: the reference index with documents' BM25 re-encoded."""
        return [
            VariantSpec(quantization=self.quantization[0], hnsw=self.hnsw[0], bm25=p)
            for p in self.bm25
        ]

    def dense_searches(self, spec: VariantSpec) -> list[SearchParams]:
        """Dense searches of one variant: ``hnsw_ef``, and for a quantized one, rescoring off,
        or on with each oversampling factor."""
        out: list[SearchParams] = []
        for ef in self.hnsw_ef:
            if spec.quantization.kind == "none":
                out.append(SearchParams(hnsw_ef=ef))
                continue
            for rescore in dict.fromkeys(self.rescore):
                if not rescore:
                    out.append(SearchParams(hnsw_ef=ef, quantization_rescore=False))
                    continue
                for factor in dict.fromkeys(self.oversampling):
                    out.append(
                        SearchParams(
                            hnsw_ef=ef, quantization_rescore=True, quantization_oversampling=factor
                        )
                    )
        return out

    @property
    def size(self) -> int:
        """Configurations the dense part of the grid measures (before aggregation)."""
        return sum(len(self.dense_searches(v)) for v in self.variants())


#: A sweep of SciFact (9.7k chunks) takes a few minutes here; see bench/bench_tune.py.
DEFAULT_GRID = Grid(
    quantization=[
        Quantization(),
        Quantization(kind="scalar"),
        Quantization(kind="binary", bits=1),
        Quantization(kind="binary", bits=1.5),
        Quantization(kind="binary", bits=2),
        Quantization(kind="binary", bits=1, query_encoding="scalar8"),
        Quantization(kind="binary", bits=2, query_encoding="scalar8"),
        Quantization(kind="turbo", bits=2),
        Quantization(kind="turbo", bits=4),
    ],
    hnsw=[Hnsw(m=16, ef_construct=100), Hnsw(m=8, ef_construct=64), Hnsw(m=32, ef_construct=200)],
    hnsw_ef=[32, 64, 128],
    rescore=[True, False],
    oversampling=[1.0, 2.0, 4.0],
    fusion=[
        *(
            hybrid(fusion, prefetch=prefetch, **knobs)
            for prefetch in (50, 100, 200)
            for fusion, knobs in (
                ("dbsf", {}),
                ("rrf", {"rrf_k": 60}),
                ("rrf", {"rrf_k": 10}),
                ("rrf", {"rrf_k": 60, "fusion_weights": (2.0, 1.0)}),
                ("rrf", {"rrf_k": 60, "fusion_weights": (1.0, 2.0)}),
            )
        ),
        # the convex combination with theoretical min-max normalisation (TM2C2, Bruch et al.
        # 2023), fused by ragsonde: dense weight 0.6 to 0.8, deeper lists (SciFact, weights
        # 0.7/0.3: 0.7345 nDCG@10 with 200 candidates per side, 0.7394 with 1000; DBSF 0.7350)
        *(
            hybrid("linear", prefetch=prefetch, fusion_weights=weights)
            for prefetch in (200, 1000)
            for weights in ((0.6, 0.4), (0.7, 0.3), (0.8, 0.2))
        ),
    ],
    # k1/b, and a title counted twice more (a BM25F-style field boost: +0.009 hybrid nDCG@10
    # on SciFact, in the lead's offline replay of DBSF pf200)
    bm25=[
        Bm25Params(k1=0.9, b=0.4),
        Bm25Params(k1=1.2, b=0.75, title_weight=2),
        Bm25Params(k1=0.9, b=0.4, title_weight=2),
    ],
    aggregation=[Aggregation(), Aggregation(method="sum", n=2), Aggregation(method="sum", n=3)],
)


def _read(path: Path) -> Any:
    try:
        text = read_bytes(path, MAX_SETTINGS_BYTES, "grid file").decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(not_utf8(e)) from e
    if path.suffix in {".yaml", ".yml"}:
        import yaml

        try:
            # YAML can carry a lone surrogate ("\ud800"): refused here, naming its field
            return check_json(yaml.safe_load(text))
        except yaml.YAMLError as e:
            raise QueryValidationError(f"Cannot read grid file {path}: {e}", field="grid") from e
    return tomllib.loads(text)


def load_grid(path: Path) -> Grid:
    """A grid from a TOML or YAML file; axes it leaves out keep the default grid's values."""
    why = not_a_file(path)  # a folder, a FIFO, a device, a dangling symlink: said as it is
    if why is not None:
        raise QueryValidationError(f"Cannot read grid file {path}: {why}.", field="grid")
    try:
        data = _read(path)
    except (tomllib.TOMLDecodeError, ValueError, OSError) as e:
        raise QueryValidationError(f"Cannot read grid file {path}: {e}", field="grid") from e
    if not isinstance(data, dict):
        raise QueryValidationError(f"Grid file {path} must hold a table of axes.", field="grid")
    if not data:  # an empty (or truncated) file swept the whole default grid, saying nothing
        raise QueryValidationError(
            f"Grid file {path} names no axis; leave --grid out for the default grid, or name "
            f"the axes to sweep: {', '.join(Grid.model_fields)}.",
            field="grid",
        )
    check_keys(data, Grid.model_fields, f"Grid file {path}", "grid")
    merged = {name: getattr(DEFAULT_GRID, name) for name in Grid.model_fields} | data
    try:
        return Grid.model_validate(merged)
    except ValidationError as e:
        parts = [
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}"
            for err in e.errors(include_url=False)
        ]
        raise QueryValidationError(
            f"Invalid grid file {path}: " + "; ".join(parts), field="grid"
        ) from e
