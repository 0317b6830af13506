"""What the run history holds and answers, as typed models (``history … --json`` dumps them).

A :class:`Fingerprint` is what a run ran against; :class:`RunSummary` is one row of ``history
list``; :class:`RunDiff` is ``history diff A B``; :class:`Trend` is ``history trend METRIC``.
Their JSON Schemas are published by :mod:`ragsonde.evaluate.schema` (``ragsonde schema
history-diff`` …).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragsonde.evaluate.comparison import MetricComparison, NoRegressionGate
from ragsonde.models.estimate import MetricEstimate

__all__ = [
    "BenchmarkPart",
    "CodePart",
    "ContentPart",
    "EmbedderPart",
    "ExportResult",
    "FieldChange",
    "Fingerprint",
    "FlipWhy",
    "IndexPart",
    "PruneResult",
    "QueryFlip",
    "RunDiff",
    "RunList",
    "RunShow",
    "RunSummary",
    "Trend",
    "TrendPoint",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class IndexPart(_Frozen):
    """The collection as the store describes it (``Store.collection_info``)."""

    backend: str
    dimension: int
    distance: str
    vector_name: str | None = None
    sparse_vector_name: str | None = None
    points_count: int
    quantization: dict[str, Any] | None = Field(
        default=None, description="None: the backend keeps plain vectors (no index config)."
    )
    hnsw: dict[str, Any] | None = None


class EmbedderPart(_Frozen):
    name: str
    weights_sha256: str | None = Field(
        default=None, description="SHA-256 of the model's weight file; None for a remote API."
    )


class ContentPart(_Frozen):
    """A cheap hash of the collection's content: the first ``sampled`` points in scroll (id)
    order, each as its id and a hash of its payload (``created_at`` left out)."""

    sampled: int
    sample_sha256: str


class BenchmarkPart(_Frozen):
    name: str
    queries: int
    queries_sha256: str = Field(description="Hash of the queries' ids, texts, filters, top_k.")
    labels_sha256: str = Field(description="Hash of the relevance labels (qrels).")

    @property
    def sha256(self) -> str:
        """Queries and labels together: runs compare like for like only when it is equal."""
        return hashlib.sha256(f"{self.queries_sha256}:{self.labels_sha256}".encode()).hexdigest()


class CodePart(_Frozen):
    ragsonde_version: str
    git_commit: str | None = Field(
        default=None, description="HEAD of the working directory's git checkout, if any."
    )


class Fingerprint(_Frozen):
    """What one run ran against. ``history diff`` names the dotted fields that differ."""

    search: dict[str, Any] = Field(
        description="The effective search parameters (the report's search block, completed "
        "from the settings for any the report does not carry)."
    )
    index: IndexPart | None = None
    embedder: EmbedderPart
    chunking: dict[str, Any] | None = Field(
        default=None, description="The chunking configuration, where the collection records one."
    )
    content: ContentPart | None = None
    benchmark: BenchmarkPart
    code: CodePart

    def flat(self) -> dict[str, Any]:
        """Dotted field -> value (lists and leaves kept whole), for diffs."""
        out: dict[str, Any] = {}

        def walk(prefix: str, value: Any) -> None:
            if isinstance(value, dict) and value:
                for k, v in value.items():
                    walk(f"{prefix}.{k}" if prefix else str(k), v)
            else:
                out[prefix] = value

        walk("", self.model_dump(mode="json"))
        return out


class FieldChange(_Frozen):
    field: str
    a: Any = None
    b: Any = None

    def describe(self) -> str:
        return f"{self.field}: {json.dumps(self.a)} -> {json.dumps(self.b)}"


class RunSummary(_Frozen):
    """One recorded run: ``history list`` prints one line of these."""

    run_id: int
    created_at: str
    dataset: str
    benchmark: str
    benchmark_sha256: str
    collection: str
    embedder: str
    n_queries: int
    passed: bool = Field(description="Every gate of the run passed (true when it had none).")
    seconds: float
    metrics: dict[str, float]
    gates: int | None = Field(
        default=None,
        description="How many gates the run was checked against (0: none, so passed says "
        "nothing); None when the recorded report does not say.",
    )
    metrics_ci: dict[str, MetricEstimate] | None = Field(
        default=None,
        description="An estimated run's metrics (eval --estimate): each with its 95 % interval, "
        "label counts and method, as the report's metrics_ci; None for a run not estimated.",
    )


class RunList(_Frozen):
    history: str
    runs: list[RunSummary]


class FlipWhy(_Frozen):
    """Why a flipped query missed a relevant document, from the ``--explain`` data of the run
    in which it missed (B for a lost query, A for a gained one): the stage the miss ladder
    blamed, its evidence, and the fingerprint changes that bear on that stage."""

    run_id: int = Field(description="The run whose --explain data this is (where it missed).")
    doc_id: str
    stage: str = Field(description="The miss ladder's stage (see the report's misses section).")
    evidence: dict[str, str | int | float | bool | None] = Field(default_factory=dict)
    changes: list[FieldChange] = Field(
        default_factory=list,
        description="The fingerprint changes between the two runs that bear on the stage; "
        "empty when none does (the stage is named, no cause is guessed).",
    )

    def describe(self, direction: str) -> str:
        """``doc lidar: `ann` miss after search.hnsw_ef: 64 -> 8 (rank_exact=3, …)``."""
        what = f"`{self.stage}` miss" if direction == "lost" else f"was a `{self.stage}` miss"
        if self.changes:
            verb = "after" if direction == "lost" else "until"
            cause = f" {verb} " + "; ".join(c.describe() for c in self.changes)
        else:
            cause = " (no fingerprint change bears on this stage)"
        shown = ", ".join(f"{k}={v}" for k, v in self.evidence.items())
        return f"doc {self.doc_id}: {what}{cause}" + (f" [{shown}]" if shown else "")


class QueryFlip(_Frozen):
    """A query that went from hit to miss (``lost``) or miss to hit (``gained``) on ``metric``."""

    query_id: str
    query: str
    direction: str = Field(description='"lost" (hit -> miss) or "gained" (miss -> hit)')
    a: float
    b: float
    why: list[FlipWhy] = Field(
        default_factory=list,
        description="One per relevant document missed in the run where the query missed, when "
        "that run was evaluated with --explain; empty otherwise (nothing is guessed).",
    )


class RunDiff(_Frozen):
    """B against A: what changed in the fingerprint, the metrics, and which queries flipped."""

    a: RunSummary
    b: RunSummary
    like_for_like: bool = Field(
        description="Same benchmark (queries and labels): the metric deltas are comparable."
    )
    refused: str | None = Field(
        default=None, description="Why metrics were not compared (different benchmarks)."
    )
    changes: list[FieldChange]
    metrics: list[MetricComparison] = Field(default_factory=list)
    not_comparable: str | None = Field(
        default=None,
        description="Why some metrics have the verdict 'not comparable': the runs ranked to "
        "different depths (top_k, or the deepest cutoff), and those metrics read the whole "
        "ranked list; None when every metric is compared.",
    )
    flip_metric: str | None = None
    flips: list[QueryFlip] = Field(default_factory=list)
    gate: NoRegressionGate | None = None

    @property
    def changed_fields(self) -> list[str]:
        return [c.field for c in self.changes]


class TrendPoint(_Frozen):
    run_id: int
    created_at: str
    value: float
    ci_low: float
    ci_high: float
    changed: list[str] = Field(
        default_factory=list, description="Fingerprint fields that changed since the run before."
    )
    interval: MetricEstimate | None = Field(
        default=None,
        description="The run's estimate of the metric with its 95 % interval (eval --estimate, "
        "PPI++ or classical over the labelled queries); None for a run not estimated.",
    )


class Trend(_Frozen):
    metric: str
    confidence: float
    points: list[TrendPoint]
    sparkline: str


class RunShow(_Frozen):
    """``history show RUN``: the run, what it ran against, its metrics with their bands."""

    run: RunSummary
    fingerprint: Fingerprint
    bands: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description="Metric -> 95 % bootstrap interval of its mean."
    )
    warnings: list[str] = Field(default_factory=list)


class PruneResult(_Frozen):
    history: str
    deleted: int
    kept: int


class ExportResult(_Frozen):
    history: str
    path: str
    runs: int
