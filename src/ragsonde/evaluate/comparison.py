"""The comparison of two evaluations, as data: what ``compare`` and ``eval --versus`` print.

Models only (no scipy): :mod:`.compare` computes them, the gate of :func:`no_regression_gate`
reads them, the CLI renders them.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from ragsonde.errors import QueryValidationError
from ragsonde.models.estimate import MetricEstimate

__all__ = [
    "DEFAULT_GATE_METRIC",
    "PPI_SIGNIFICANCE",
    "SIGNIFICANCE",
    "Comparison",
    "MetricComparison",
    "MostChanged",
    "NoRegressionGate",
    "QueryChange",
    "ReportRef",
    "no_regression_gate",
]

#: The metric the no-regression gate watches when none is named (if compared).
DEFAULT_GATE_METRIC = "ndcg@10"
SIGNIFICANCE = "both the paired t-test and the paired permutation test p < alpha"
#: What "significant" means on a partly labelled benchmark (the PPI++ difference, 1.7).
PPI_SIGNIFICANCE = (
    "the 95 % interval of the paired difference B - A by PPI++ over every query (labelled and "
    "predicted) excludes 0"
)


class _Part(BaseModel):
    model_config = ConfigDict(extra="ignore")


class MetricComparison(_Part):
    """One metric, A against B: means, per-query wins, both paired tests and the CI."""

    metric: str
    mean_a: float
    mean_b: float
    delta: float
    relative_delta: float | None
    wins: int
    ties: int
    losses: int
    t_statistic: float | None
    p_ttest: float
    p_permutation: float
    ci_low: float
    ci_high: float
    confidence: float
    significant: bool
    verdict: str = Field(
        description='"better", "worse" or "no significant difference"; in a history diff also '
        '"not comparable": a figure the two runs read at different depths (top_k).'
    )
    ppi: MetricEstimate | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="Reports of a partly labelled benchmark (eval --estimate): the paired "
        "difference B - A estimated by PPI++ over every query, from the labelled ones and both "
        "systems' predictions (sources, n_labeled, n_predicted say which); significant and "
        "verdict then follow its interval (excludes 0), and the tests above are over the "
        "labelled queries alone (1.7: the verdict's basis).",
    )
    classical: MetricEstimate | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The mean paired difference B - A over the labelled queries the tests ran "
        "on, with its classical 95 % interval (Student's t on n - 1 degrees of freedom), beside "
        "the tests' bootstrap interval (added in 1.7).",
    )


class QueryChange(_Part):
    """One query whose score moved between A and B."""

    query_id: str
    query: str
    a: float
    b: float
    delta: float


class MostChanged(_Part):
    metric: str
    queries: list[QueryChange] = Field(default_factory=list)


class ReportRef(_Part):
    """Which evaluation a side of the comparison is."""

    dataset: str = ""
    collection: str = ""
    embedder: str = ""
    search: str = Field(default="", description="Its search mode (and fusion): dense, hybrid dbsf.")


class NoRegressionGate(_Part):
    """``--gate-no-regression``: fails when B is significantly worse on a watched metric."""

    metrics: list[str]
    regressions: list[str]
    passed: bool


class Comparison(_Part):
    """B against A: one :class:`MetricComparison` per metric ("better" means B is higher)."""

    a: ReportRef
    b: ReportRef
    n_queries: int
    alpha: float
    n_resamples: int
    significance: str = Field(
        default=SIGNIFICANCE,
        description="What 'significant' means here: both paired tests, or on a partly "
        "labelled benchmark the PPI++ interval of the difference (1.7).",
    )
    metrics: list[MetricComparison]
    most_changed: MostChanged
    gate: NoRegressionGate | None = None
    warnings: list[str] = Field(
        default_factory=list,
        description="What changes how far the verdicts hold, e.g. that the labels cover one "
        "side's hits more than the other's (added in 1.6).",
    )

    def metric(self, name: str) -> MetricComparison:
        """The comparison of one metric, by name."""
        for m in self.metrics:
            if m.metric == name:
                return m
        raise QueryValidationError(
            f"metric {name!r} was not compared; compared: {', '.join(self.names)}.",
            field="metric",
        )

    @property
    def names(self) -> list[str]:
        """The compared metrics, in order."""
        return [m.metric for m in self.metrics]

    @property
    def changed_metric(self) -> str:
        return self.most_changed.metric

    @property
    def changed(self) -> list[QueryChange]:
        """The queries that moved most on :attr:`changed_metric`, largest move first."""
        return self.most_changed.queries

    def regressions(self, names: Sequence[str] | None = None) -> list[MetricComparison]:
        """The metrics (of ``names``, default all) on which B is significantly worse than A."""
        chosen = self.metrics if names is None else [self.metric(n) for n in names]
        return [m for m in chosen if m.verdict == "worse"]


def _gate_metrics(comparison: Comparison, named: Sequence[str] | None) -> list[str]:
    """The named metrics, else ndcg@10 when compared, else every compared metric."""
    if named:
        return list(dict.fromkeys(named))
    if DEFAULT_GATE_METRIC in comparison.names:
        return [DEFAULT_GATE_METRIC]
    return comparison.names


def no_regression_gate(comparison: Comparison, named: Sequence[str] | None) -> NoRegressionGate:
    """The no-regression gate: it fails when B is significantly worse than A on a watched metric
    (the named ones, else ndcg@10 when compared, else every compared metric)."""
    watched = _gate_metrics(comparison, named)
    regressions = [m.metric for m in comparison.regressions(watched)]
    return NoRegressionGate(metrics=watched, regressions=regressions, passed=not regressions)
