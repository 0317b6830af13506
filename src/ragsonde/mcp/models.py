"""What the MCP tools answer that no other room publishes: an evaluation's summary, a run's worst
queries, the effective settings. Every other tool answers a model the library already publishes
(:class:`~ragsonde.models.Response`, :class:`~ragsonde.evaluate.misses.MissesReport`, the history's
:class:`~ragsonde.history.RunList` and :class:`~ragsonde.history.RunDiff`, the
store's :class:`~ragsonde.store.inspect.CollectionReport`). Each tool's ``outputSchema`` is its
model's JSON Schema.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragsonde.evaluate.report import Latency
from ragsonde.models import ErrorInfo, Response
from ragsonde.models.estimate import MetricEstimate

__all__ = [
    "BenchRow",
    "ConfigReport",
    "EvalSummary",
    "FailingQueries",
    "FailingQuery",
    "SearchAnswer",
    "SettingRow",
    "ToolErrorBody",
]


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BenchRow(_Out):
    """One inline benchmark question (the ``.jsonl`` benchmark's row)."""

    query_id: str = Field(min_length=1, max_length=200)
    query: str = Field(min_length=1)
    relevant: list[str] | dict[str, int] = Field(
        description="The relevant ids (document ids by default), or id -> graded relevance."
    )
    filters: dict[str, Any] | None = None


class EvalSummary(_Out):
    """An evaluation's headline; the whole report is the resource ``report_uri``."""

    report_id: str = Field(description="Names the report: ragsonde://reports/{report_id}.")
    report_uri: str
    run_uri: str = Field(description="The TREC run file of this evaluation, as a resource.")
    history_run: int | None = Field(
        default=None, description="The run's id in the run history, when recorded (--allow-write)."
    )
    dataset: str
    collection: str
    embedder: str
    queries: int
    metrics: dict[str, float]
    metrics_ci: dict[str, MetricEstimate] | None = Field(
        default=None,
        description="With estimate: each metric over every row, labelled or not, with its 95 % "
        "interval, the method, the labelled and predicted counts and the classical interval "
        "over the labelled rows (the eval report's metrics_ci); metrics are then the labelled "
        "rows' means.",
    )
    latency: Latency
    passed: bool
    gates: dict[str, bool] = Field(default_factory=dict)
    errors: int = Field(default=0, description="Queries that failed (their messages: the report).")
    warnings: list[str] = Field(default_factory=list)
    seconds: float


class FailingQuery(_Out):
    """One query of a run, with the metric it is ranked by."""

    query_id: str
    query: str
    value: float
    relevant: list[str]
    retrieved: list[str] = Field(description="The top retrieved ids, best first.")
    weak: bool | None = Field(
        default=None, description="Traffic: predicted is below the report's weak_below."
    )
    signals: dict[str, float] = Field(
        default_factory=dict, description="Traffic: the label-free evidence, name -> value."
    )
    next: str | None = Field(default=None, description="Traffic: the command to look further.")


class FailingQueries(_Out):
    """A run's worst queries on ``metric``, worst first."""

    source: str = Field(description="Where the run came from: a report id or a history run.")
    metric: str
    queries: list[FailingQuery]
    total: int = Field(description="Queries in the run.")


class SettingRow(_Out):
    """One effective setting and where it came from."""

    key: str
    value: Any
    source: str = Field(description="default, file, env or flag.")
    where: str | None = None


class ConfigReport(_Out):
    """The effective settings (secrets masked) and the settings file read."""

    config_file: str
    settings: list[SettingRow]
    roots: list[str] = Field(description="The folders this server may read paths under.")
    allow_write: bool


class SearchAnswer(Response):
    """The search tool's answer: the contract's response, and what an agent must know of it
    that the results alone do not say."""

    warnings: list[str] = Field(
        default_factory=list,
        description="E.g. every result has empty text: the collection keeps its text at a "
        "payload path the server's mapping does not read; or a payload field holds a value of "
        "another type than its field's (a list where the text should be), counted.",
    )


class ToolErrorBody(_Out):
    """A failed call's structured content: the contract's error object."""

    error: ErrorInfo
