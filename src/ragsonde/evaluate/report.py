"""The evaluation report: typed, versioned, and the one thing every reader reads.

``ragsonde eval --json`` and ``--save`` write :class:`EvalReport` (or, with ``--versus``,
:class:`VersusReport`) dumped with ``model_dump(mode="json")``; the HTML report, the CLI tables,
the gates, ``compare``, ``/v1/eval`` and the web page all read these models, never string keys.
The JSON Schema is published in ``report.schema.json`` next to this module (``ragsonde schema
report``); a test fails when the file and the models drift apart.

Versions. ``schema_version`` is ``MAJOR.MINOR``. A minor version only adds optional fields, so a
reader accepts any report of its major version (unknown fields are ignored); a different major
is refused with a VALIDATION_ERROR. Reports saved before the version existed carry none: their
fields are exactly those of 1.0, so they are read as 1.0.

Coverage. ``metrics`` holds ``judged@k`` (the share of the top k that carries a label) next to
the ranking metrics. On a pooled benchmark (``benchmark.pooled``, 1.6: labels from judging hits)
the report warns below :data:`LOW_COVERAGE` at k=10 (or the largest k under it), because hits
outside the pools then count as misses; with sparse labels (a known item per query) judged@k is
low by construction and no conclusion changes, so it only explains the figure. ``judged_only``
says the ranking metrics were scored over judged hits only (1.1). ``misses`` (``--explain``)
blames each missed relevant document on the pipeline stage that lost it (1.3;
:mod:`ragsonde.explain`). A span-labelled run's rows carry their ``references`` and first hits
with their spans and text, so a report marks the answer inside each hit (1.4;
:mod:`ragsonde.evaluate.highlight`). ``metrics_ci`` (``--estimate``) gives each metric an
estimate with its 95 % interval, from the labelled queries and predictions for the unlabelled
ones (1.5; :mod:`ragsonde.estimate`). ``benchmark.machine_labels`` (1.7): the queries whose
labels a machine made, never gold; a gate passes on them only through an estimate. A comparison
gives each difference's interval (1.7). ``method`` ``stratified``/``stratified-ppi++``: under a
pair's judging plan (1.8). ``sources`` name predictors as ``--predictor`` does (1.9: a 1.8
report's ``signals`` is ``scores`` or ``traffic``). ``benchmark.ingested.rewritten`` (1.10): chunks
whose payload alone changed, no longer counted as ``skipped``."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, computed_field

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.comparison import Comparison
from ragsonde.evaluate.misses import MissesReport
from ragsonde.evaluate.run_file import RunSources, write_trec_run
from ragsonde.models.estimate import MetricEstimate
from ragsonde.models.params import IndexParams, SearchParams

__all__ = [
    "LOW_COVERAGE",
    "SCHEMA_VERSION",
    "BenchmarkInfo",
    "Breakdown",
    "EvalReport",
    "FieldBreakdown",
    "FilterBreakdown",
    "GateResult",
    "GroupSummary",
    "IndexHealth",
    "IngestSummary",
    "Integrity",
    "Latency",
    "Percentiles",
    "QueryRow",
    "RelevanceField",
    "SearchInfo",
    "SpanHit",
    "SpanRef",
    "SpanSummary",
    "StageTimings",
    "SweepRow",
    "ThresholdSweep",
    "Throughput",
    "VersusReport",
    "check_schema_version",
]

#: The report format's version: MAJOR.MINOR (see the module docstring).
SCHEMA_VERSION = "1.10"

#: judged@10 below this: most of the top 10 was never labelled, and scores as misses.
LOW_COVERAGE = 0.5


class _Part(BaseModel):
    """A part of a report: extra keys are ignored, so a newer minor version still reads."""

    model_config = ConfigDict(extra="ignore")


class Percentiles(_Part):
    """Milliseconds over the queries of a run."""

    p50: float = 0.0
    p95: float = 0.0
    p99: float = 0.0
    mean: float = 0.0
    max: float = 0.0


class Latency(_Part):
    """Percentiles per stage, one query at a time, embedding included."""

    embedding_ms: Percentiles = Field(default_factory=Percentiles)
    search_ms: Percentiles = Field(default_factory=Percentiles)
    post_processing_ms: Percentiles = Field(default_factory=Percentiles)
    total_ms: Percentiles = Field(default_factory=Percentiles)

    def stages(self) -> dict[str, Percentiles]:
        """Stage name -> percentiles, in pipeline order."""
        return {name: getattr(self, name) for name in type(self).model_fields}


class StageTimings(_Part):
    """One query's milliseconds per stage."""

    embedding_ms: float = 0.0
    search_ms: float = 0.0
    post_processing_ms: float = 0.0
    total_ms: float = 0.0


class Throughput(_Part):
    """Batched retrieval: every query again, in batches of ``batch_size``."""

    batch_size: int
    queries_per_s: float


class SpanRef(_Part):
    """``text[start:end]`` of document ``doc_id`` (``str`` indices of its parsed text)."""

    doc_id: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)


class SpanHit(SpanRef):
    """A retrieved chunk of a span-labelled query, with where it sits in its document."""

    text: str = Field(description="The chunk's text: text == document[start:end].")
    score: float


class QueryRow(_Part):
    """One benchmark query: what was relevant, what came back, its metrics and timings."""

    query: str
    relevant: dict[str, int]
    retrieved: list[tuple[str, float]] = Field(
        description="The first 10 ranked ids (documents, urls or chunks) with their scores."
    )
    total_ms: float
    timings: StageTimings
    # Only a query that has filters names them (and counts their violations) in the JSON.
    filters: dict[str, Any] | None = Field(default=None, exclude_if=lambda v: v is None)
    filter_violations: int | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Returned results that break the query's filters.",
    )
    metrics: dict[str, float] = Field(default_factory=dict)
    # Span-labelled benchmarks only: the answer's excerpts and the top chunks with their text,
    # so the report can mark the answer inside each hit (evaluate.highlight).
    references: list[SpanRef] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The answer's excerpts (a span-labelled benchmark).",
    )
    hits: list[SpanHit] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The first ranked chunks with their spans and text (a span-labelled "
        "benchmark whose chunks record spans).",
    )


class Integrity(_Part):
    """Checks on the data and the contract of what came back (see :mod:`.integrity`)."""

    checked_results: int = 0
    problems: int = 0
    absent_fields: list[str] = Field(
        default_factory=list,
        description="Fields no checked result has: the layout stores none (added in 1.1).",
    )
    counts: dict[str, int] = Field(default_factory=dict)
    examples: dict[str, list[str]] = Field(default_factory=dict)


class IngestSummary(_Part):
    """What ``--ingest`` (or ``--versus``) ingested before evaluating."""

    collection: str
    documents: int = 0
    chunks: int = 0
    embedded: int = 0
    rewritten: int = Field(
        default=0,
        description="Chunks whose embedded text was unchanged but whose payload changed: "
        "written again with their stored vector, not embedded (added in 1.10; before, they "
        "were counted in skipped).",
    )
    skipped: int = Field(default=0, description="Chunks stored as they were: nothing written.")
    deleted: int = 0
    failed: list[dict[str, str]] = Field(default_factory=list)
    seconds: float = 0.0


class BenchmarkInfo(_Part):
    name: str
    queries: int
    skipped_queries: list[str] = Field(default_factory=list)
    relevant_ids: int = 0
    relevant_missing_from_collection: list[str] = Field(default_factory=list)
    errors: dict[str, str] = Field(
        default_factory=dict, description="Query id -> 'CODE: message' of a failed query."
    )
    ingested: IngestSummary | None = None
    pooled: bool = Field(
        default=False,
        description="Labels from judged pools (LLM or human judgments): an unlabelled hit in "
        "the top k is a hole, and low judged@k makes the metrics a lower bound (added in 1.6).",
    )
    machine_labels: dict[str, str] = Field(default_factory=dict, description="Query id -> who "
        "made its labels when a machine did ('generator:offline:gist', 'llm:…'): never gold in "
        "an estimate; a gate on a metric passes only through its estimate (1.7).")  # fmt: skip


class RelevanceField(_Part):
    """The payload path the benchmark's relevant ids were read from (added in 1.1)."""

    path: str = Field(description="A dotted payload path, or '@id' for the point id.")
    matched: int = Field(description="Distinct relevant ids seen at path in the sample.")
    total: int = Field(description="Distinct relevant ids in the benchmark.")
    sampled: int = Field(description="Payloads sampled.")
    configured: bool = Field(
        description="True when path is a mapped doc_id path; False when found by sampling."
    )
    tried: list[str] = Field(default_factory=list, description="Paths tried, in order.")

    def describe(self) -> str:
        """One line for a report: where the ids were read, and whether that was a guess."""
        how = "the mapped doc_id path" if self.configured else "found by sampling payloads"
        return (
            f"relevance ids read from '{self.path}' ({how}): {self.matched} of {self.total} "
            f"seen in {self.sampled} sampled points"
        )


class SearchInfo(_Part):
    mode: str = "dense"
    exact: bool = False
    index: str = "HNSW"
    backend: str = ""
    fetch_chunks: int = 0
    score_threshold: float = 0.0
    aggregation: str = "max"
    """How chunks became documents: ``max`` (best chunk), ``sumN`` (sum of the N best chunk
    scores), or ``chunk`` (relevance by chunk: no aggregation)."""
    fusion: str | None = None
    """mode=hybrid: the fusion and its knobs (``dbsf``, ``rrf-k60/w1:0.5``, ``linear/w0.7:0.3``)."""
    params: SearchParams | None = None
    """Every search parameter that ran (1.2): the settings with the run's own on top."""
    collection_index: IndexParams | None = None
    """How the collection searched was built, as far as it records (1.2): quantization, HNSW
    graph, BM25 parameters."""


class SpanSummary(_Part):
    """Span metrics of a span-labelled benchmark (:mod:`ragsonde.evaluate.spans`)."""

    available: bool = Field(
        description="False when retrieved chunks record no span (another pipeline's collection)."
    )
    note: str = ""
    metrics: dict[str, float] = Field(
        default_factory=dict,
        description="span_recall@k, span_precision@k, span_iou@k, span_precision_omega (means).",
    )


class GateResult(_Part):
    gate: str
    value: float | None
    passed: bool
    on: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="What was tested when not the value itself: an estimated metric's interval "
        "end (1.5); or why a gate on machine-made labels' raw score failed (1.7).",
    )


class SweepRow(_Part):
    threshold: float
    precision: float
    recall: float
    f1: float
    no_result_share: float


class ThresholdSweep(_Part):
    """Score-threshold calibration (see :mod:`.sweep`)."""

    rows: list[SweepRow]
    best_f1: SweepRow
    max_recall_loss: float
    recall_preserving: SweepRow
    recommended_setting: str


class IndexHealth(_Part):
    """HNSW against exact search on the same queries."""

    recall_vs_exact: dict[str, float | None]
    ann_search_ms: Percentiles
    exact_search_ms: Percentiles
    note: str = ""


class GroupSummary(_Part):
    """One group of a breakdown: its queries and their mean metrics."""

    queries: int
    metrics: dict[str, float] = Field(default_factory=dict)
    empty_results: int = 0
    filter_violations: int = 0
    query_ids: list[str] = Field(default_factory=list)


class FilterBreakdown(_Part):
    groups: dict[str, GroupSummary]


class FieldBreakdown(_Part):
    field: str
    depth: int | None = None
    rule: str = ""
    groups: dict[str, GroupSummary]


class Breakdown(_Part):
    """Metrics per filter and per ``--by`` field (see :mod:`.breakdown`)."""

    filters: FilterBreakdown | None = None
    by: FieldBreakdown | None = None


class EvalReport(_Part):
    """One evaluation: a benchmark against a collection (``ragsonde eval --json``)."""

    schema_version: str = SCHEMA_VERSION
    kind: Literal["eval"] = "eval"
    dataset: str
    collection: str
    embedder: str
    relevance_by: str
    ks: list[int]
    search: SearchInfo
    metrics: dict[str, float]
    metrics_ci: dict[str, MetricEstimate] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Each metric estimated with a 95 % interval from the labelled queries and the "
        "predictions for all (--estimate; ragsonde.estimate), the classical interval beside it "
        "(1.5). ``metrics`` stays the mean over the labelled queries.",
    )
    latency: Latency
    throughput: Throughput | None = None
    integrity: Integrity
    benchmark: BenchmarkInfo
    gates: list[GateResult] = Field(default_factory=list)
    threshold_sweep: ThresholdSweep | None = None
    index_health: IndexHealth | None = None
    breakdown: Breakdown | None = None
    spans: SpanSummary | None = Field(
        default=None, description="Span metrics, when the benchmark labels answers by span."
    )
    relevance_field: RelevanceField | None = Field(
        default=None, description="Where the relevant ids were read (relevance by doc)."
    )
    judged_only: bool = Field(
        default=False, description="Ranking metrics scored over judged hits only (1.1)."
    )
    misses: MissesReport | None = Field(
        default=None,
        description="Each missed relevant document blamed on a pipeline stage (--explain, 1.3).",
    )
    warnings: list[str] = Field(
        default_factory=list, description="What a reader should know about this run."
    )
    created_at: str
    seconds: float = Field(
        default=0.0,
        description="Wall seconds from the command's start (CLI) or the call to the report.",
    )
    per_query: dict[str, QueryRow]
    _run: dict[str, dict[str, float]] = PrivateAttr(default_factory=dict)
    _sources: RunSources = PrivateAttr(default_factory=RunSources)
    history_run: int | None = Field(
        default=None, exclude=True, description="The run's id in the run history, if recorded."
    )

    @computed_field  # type: ignore[prop-decorator]
    @property
    def n_queries(self) -> int:
        return len(self.per_query)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def passed(self) -> bool:
        """Every gate passed (no gate: passed)."""
        return all(g.passed for g in self.gates)

    def coverage(self) -> tuple[int, float] | None:
        """``(k, judged@k)`` at k=10, or the largest cutoff under 10 (None: not measured)."""
        ks = [k for k in self.ks if k <= 10 and f"judged@{k}" in self.metrics]
        if not ks:
            return None
        return max(ks), self.metrics[f"judged@{max(ks)}"]

    def low_coverage(self) -> tuple[int, float] | None:
        """:meth:`coverage` when it is below :data:`LOW_COVERAGE` on a pooled benchmark, else
        None. With sparse labels (a known item per query) judged@k is low by construction and
        unlabelled hits are not relevant by the standard assumption: that changes no
        conclusion, so it is not flagged."""
        if not self.benchmark.pooled:
            return None
        cov = self.coverage()
        return cov if cov is not None and cov[1] < LOW_COVERAGE else None

    @property
    def run(self) -> dict[str, dict[str, float]]:
        """Query id -> {retrieved id: score}, the whole ranking (not saved in the JSON)."""
        return self._run

    def with_run(
        self, run: dict[str, dict[str, float]], sources: RunSources | None = None
    ) -> EvalReport:
        """The whole ranking, and what the run read (``sources``: never written over)."""
        self._run, self._sources = run, sources or RunSources()
        return self

    def write_run(self, path: Path, tag: str = "ragsonde") -> None:
        """A TREC run file (``qid Q0 docid rank score tag``) that trec_eval reads; refused
        over the benchmark, another input of the run or the history (:mod:`.run_file`)."""
        write_trec_run(self._run, path, dataset=self.dataset, sources=self._sources, tag=tag)


class VersusReport(_Part):
    """Two embedders on one benchmark (``ragsonde eval --versus``): both reports and B vs A."""

    schema_version: str = SCHEMA_VERSION
    kind: Literal["versus"] = "versus"
    a: EvalReport
    b: EvalReport
    comparison: Comparison

    @property
    def passed(self) -> bool:
        """Both sides passed their ``--gate`` gates (regressions are a separate question)."""
        return self.a.passed and self.b.passed


def check_schema_version(data: dict[str, Any], source: str) -> None:
    """Refuse a report of another major version (a report with no version is read as 1.0)."""
    version = str(data.get("schema_version", "1.0"))
    major = version.split(".", 1)[0]
    if major != SCHEMA_VERSION.split(".", 1)[0]:
        raise QueryValidationError(
            f"{source}: report schema version {version} is not readable by this ragsonde "
            f"(reads {SCHEMA_VERSION.split('.')[0]}.x); re-run `ragsonde eval … --save` with "
            "this version, or compare with the ragsonde that wrote it.",
            field="schema_version",
        )
