"""The tune report: typed models for everything ``ragsonde tune`` measures and decides.

``TuneReport`` carries its own ``schema_version``; ``--json`` prints ``report.model_dump()``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, computed_field

from ragsonde.evaluate.comparison import MetricComparison
from ragsonde.models.params import IndexParams, SearchParams
from ragsonde.tune.grid import Aggregation, Grid
from ragsonde.tune.variants import VariantSpec, VariantStats

__all__ = [
    "NOT_MEASURABLE",
    "ConfigResult",
    "Constraints",
    "CrossValidation",
    "FoldResult",
    "Recommendation",
    "SplitSpread",
    "TuneReport",
    "VariantResult",
]

#: 2: a configuration's search is one ``search`` block (the ``[search]`` names), not ``knobs``,
#: ``fusion`` and ``aggregation``.
SCHEMA_VERSION = "2.1"
#: What the report says instead of a number for a knob the backend would ignore.
NOT_MEASURABLE = "not measurable on this backend"

_MiB = 1024 * 1024


class VariantResult(BaseModel):
    """One built index variant: its spec, what it cost, and the guards' verdicts."""

    model_config = ConfigDict(frozen=True)
    label: str
    spec: VariantSpec
    stats: VariantStats
    indexed: bool
    quantization_verified: bool | None = None
    """``None`` for plain vectors; ``True`` once codes and un-rescored scores prove it is on."""
    measurable: bool = True
    note: str | None = None

    @property
    def vector_memory_mb(self) -> float:
        return self.stats.vector_ram_bytes / _MiB


class ConfigResult(BaseModel):
    """One configuration of the sweep and its measures: the index ``variant`` it searched, and
    ``search``, the parameters it ran with, spelled as ``[search]`` and every query spell
    them (only the ones the sweep set)."""

    model_config = ConfigDict(frozen=True)
    id: str
    variant: str
    search: SearchParams
    metrics: dict[str, float]
    recall_vs_exact: float | None = Field(
        default=None, description="recall@10 of the point ids against exact search"
    )
    hnsw_loss: float | None = Field(
        default=None, description="1 - recall@10 of unquantized HNSW against exact search"
    )
    quantization_loss: float | str | None = Field(
        default=None, description="1 - recall@10 of this search against unquantized HNSW"
    )
    latency_p50_ms: float
    latency_p95_ms: float
    vector_memory_mb: float
    memory_ratio: float = Field(description="vector RAM / float32 vector size")
    disk_mb: float
    build_s: float
    per_query_ndcg: dict[str, float] = Field(default_factory=dict, exclude=True, repr=False)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mode(self) -> Literal["dense", "hybrid"]:
        return "hybrid" if self.search.mode == "hybrid" else "dense"

    @property
    def aggregation(self) -> Aggregation:
        """How chunk scores became document scores (the ``aggregation`` names of ``search``)."""
        return Aggregation(method=self.search.aggregation, n=self.search.aggregation_n)

    @property
    def ndcg(self) -> float:
        return self.metrics["ndcg@10"]


class Constraints(BaseModel):
    """What the recommendation must satisfy (``None``: no limit)."""

    model_config = ConfigDict(frozen=True)
    max_latency_ms: float | None = Field(default=None, gt=0, description="on p95 latency")
    min_recall: float | None = Field(
        default=None, ge=0, le=1, description="on recall@10 against exact search"
    )
    max_memory_mb: float | None = Field(default=None, gt=0, description="on vector RAM")

    def admits(self, c: ConfigResult) -> bool:
        if self.max_latency_ms is not None and c.latency_p95_ms > self.max_latency_ms:
            return False
        if self.max_memory_mb is not None and c.vector_memory_mb > self.max_memory_mb:
            return False
        if self.min_recall is not None:
            return c.recall_vs_exact is not None and c.recall_vs_exact >= self.min_recall
        return True


class FoldResult(BaseModel):
    model_config = ConfigDict(frozen=True)
    fold: int
    n_train: int
    n_held_out: int
    chosen: str
    train_ndcg: float
    held_out_ndcg: float


class SplitSpread(BaseModel):
    """The held-out nDCG@10 of the same selection repeated over other seeded fold splits: how
    much the headline figure owes to which queries happened to share a fold."""

    model_config = ConfigDict(frozen=True)
    splits: int = Field(description="fold splits, each with its own seed, the headline's aside")
    mean: float
    min: float
    max: float


class CrossValidation(BaseModel):
    """k-fold selection over the queries: chosen on k-1 folds, scored on the one left out."""

    model_config = ConfigDict(frozen=True)
    scope: str
    folds: int
    objective: str = "ndcg@10"
    held_out_ndcg: float = Field(description="mean over all queries of their held-out fold")
    train_ndcg: float = Field(description="mean of the chosen configurations on their training")
    per_fold: list[FoldResult]
    held_out_se: float | None = Field(
        default=None,
        description="standard error of held_out_ndcg over the queries (sample std / sqrt(n))",
    )
    spread: SplitSpread | None = None


class Recommendation(BaseModel):
    model_config = ConfigDict(frozen=True)
    config: str | None
    constraints: Constraints
    feasible: int
    reason: str
    held_out_ndcg: float | None = None


class VersusCurrent(BaseModel):
    """Tune's choice against what the collection runs now, on held-out folds.

    ``current``: the settings' search on the collection as it is (measured by ``evaluate``,
    the same path ``ragsonde eval`` takes). ``tuned``: per query, the configuration chosen on
    the other folds. The comparison is paired, query by query (t-test, permutation test,
    bootstrap interval of the difference): when it is not significant, the verdict is to keep
    what you have. On a partly labelled benchmark, ``comparison.ppi`` holds the gain over every
    query by PPI++, and "adopt" needs its interval above 0 (2.1)."""

    model_config = ConfigDict(frozen=True)
    current_search: SearchParams
    current_index: IndexParams
    current_ndcg: float
    tuned_held_out_ndcg: float
    chosen_per_fold: list[str]
    comparison: MetricComparison
    verdict: Literal["adopt", "keep what you have"]
    reason: str


class TuneReport(BaseModel):
    """Everything one ``ragsonde tune`` run measured, and what it recommends."""

    model_config = ConfigDict(frozen=True)
    schema_version: str = SCHEMA_VERSION
    dataset: str
    collection: str
    backend: str
    embedder: str
    n_queries: int
    n_points: int
    dimension: int
    grid: Grid
    variants: list[VariantResult]
    configurations: list[ConfigResult]
    pareto: list[str] = Field(description="ids on the quality / p95 latency / memory front")
    cross_validation: dict[str, CrossValidation]
    recommendation: Recommendation
    versus_current: VersusCurrent | None = None
    """The recommendation's held-out gain over the collection's current configuration."""
    warnings: list[str] = Field(default_factory=list)
    seconds: float = 0.0
    created_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())

    def config(self, config_id: str) -> ConfigResult:
        for c in self.configurations:
            if c.id == config_id:
                return c
        raise KeyError(config_id)

    def variant(self, label: str) -> VariantResult:
        for v in self.variants:
            if v.label == label:
                return v
        raise KeyError(label)
