"""Estimates on an evaluation's report: ``metrics_ci`` for a run of a partly labelled
benchmark, and PPI++ differences on a comparison of two such runs.

The estimate room sits above the evaluation (it reads reports; the traffic room's predictor
replays queries), so the evaluation does not call it: ``evaluate()`` with
``EvalOptions(estimate=True)`` keeps the benchmark's unlabelled rows and scores the labelled
ones, and the surfaces hand it :func:`estimating`'s step as its ``extend``. The step runs
:func:`estimate_report` (every metric's estimate, the gates again on it) on the finished report
before it is timed and recorded, so the report's ``seconds`` covers the estimate and the run in
the history carries its intervals. ``eval --versus``/``--against``, ``compare`` and ``history
diff`` add each compared metric's paired difference with its interval
(:func:`estimate_comparison`, through :func:`estimate_versus` for the former). Gold is a
person's labels only: a machine's (generated, an LLM judge's) are predictions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragsonde.errors import QueryValidationError
from ragsonde.estimate.estimate import estimate_difference, features
from ragsonde.estimate.pair_plan import (
    ComparisonPlan,
    estimate_planned_difference,
    estimate_planned_metric,
)
from ragsonde.estimate.ppi import MIN_LABELED
from ragsonde.estimate.run import (
    PREDICTORS,
    RunContext,
    check_predictor,
    estimate_run,
    read_plan,
)
from ragsonde.evaluate.comparison import PPI_SIGNIFICANCE
from ragsonde.models.prediction import PredictedQuery, QueryPrediction

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from pathlib import Path

    from ragsonde.estimate.plan import JudgingPlan
    from ragsonde.evaluate.comparison import Comparison, MetricComparison
    from ragsonde.evaluate.options import EvalOptions
    from ragsonde.evaluate.report import EvalReport, QueryRow, VersusReport
    from ragsonde.models.estimate import MetricEstimate

__all__ = [
    "comparison_predictor",
    "estimate_comparison",
    "estimate_paired",
    "estimate_report",
    "estimate_versus",
    "estimating",
]

#: The predictors that replay the queries (they need a workspace).
REPLAYS = frozenset({"traffic", "consensus"})


def _scores(rows: Mapping[str, QueryRow]) -> dict[str, list[float]]:
    return {q: [s for _, s in row.retrieved] for q, row in rows.items()}


def _person_labelled(report: EvalReport) -> set[str]:
    """The queries a person labelled: a machine's labels (generated, an LLM judge's) are never
    gold (they are predicted, as the unlabelled rows)."""
    machine = report.benchmark.machine_labels
    return {q for q, row in report.per_query.items() if row.relevant and q not in machine}


def _rankings(rows: Mapping[str, QueryRow]) -> dict[str, list[str]]:
    return {q: [d for d, _ in row.retrieved] for q, row in rows.items()}


def estimate_report(
    report: EvalReport,
    options: EvalOptions,
    *,
    workspace: Any = None,
    settings: Any = None,
    shown_as: str | None = None,
) -> EvalReport:
    """``report`` with ``metrics_ci`` (every metric, ``options.predictor``'s predictions,
    ``options.plan_file``'s probabilities) and its gates evaluated again, on the intervals.
    ``workspace`` (else one opened on ``settings`` for the call): for a predictor that replays
    the queries (``traffic``). ``shown_as``: what an error calls the benchmark instead of its
    path (:func:`~ragsonde.evaluate.evaluate`'s)."""
    rows = report.per_query
    gold = _person_labelled(report)
    if not gold:
        raise QueryValidationError(
            f"estimate: none of the {len(rows)} queries has a person's labels (a machine made "
            f"those of {len(report.benchmark.machine_labels)}), and an estimate rests on some. "
            "Judge a few in the web page's Judge view (`ragsonde serve`; an LLM's labels from "
            "`ragsonde judge --llm` are a machine's too), then evaluate again.",
            field="estimate",
        )
    labelled = {q: row.metrics for q, row in rows.items() if q in gold}
    queries = [PredictedQuery(query_id=q, text=row.query) for q, row in rows.items()]
    read = read_plan(options.plan_file) if options.plan_file is not None else None
    if isinstance(read, ComparisonPlan):  # a comparison's labels: the plan's strata weigh them
        report.metrics_ci = {
            name: estimate_planned_metric(
                {q: labelled[q][name] for q in labelled if name in labelled[q]}, list(rows), read
            )
            for name in report.metrics
        }
        report.gates = [g.evaluate(report) for g in options.parsed_gates]
        return report
    plan = None
    if read is not None and options.plan_file is not None:
        plan = _probabilities(read, options.plan_file, list(rows))
    from contextlib import nullcontext

    from ragsonde.workspace import using

    # a predictor that replays the queries needs a store and an embedder: the caller's, else
    # a workspace opened here for the call and closed here
    replays = workspace is None and options.predictor in REPLAYS
    with using(settings=settings) if replays else nullcontext(workspace) as ws:
        ctx = RunContext(
            scores=_scores(rows),
            workspace=ws,
            search=report.search.params,
            collection=report.collection,
            probabilities=plan,
            rankings=_rankings(rows),
            dataset=report.dataset,
            shown_as=shown_as,
        )
        report.metrics_ci = estimate_run(
            queries,
            labelled,
            ctx,
            predictor=options.predictor,
            names=list(report.metrics),
            finite=options.estimand == "benchmark",
        )
    report.gates = [g.evaluate(report) for g in options.parsed_gates]
    return report


def estimating(
    options: EvalOptions,
    *,
    workspace: Any = None,
    settings: Any = None,
    shown_as: str | None = None,
) -> Callable[[EvalReport], None] | None:
    """The extend step of an evaluation run with ``options``: :func:`estimate_report` when
    ``options.estimate``, else None (nothing to add). Hand it to ``evaluate(..., extend=…)``
    (or ``evaluate_explained``), so the estimate is timed and recorded with the run; with the
    same ``shown_as``."""
    if not options.estimate:
        return None

    def step(report: EvalReport) -> None:
        estimate_report(report, options, workspace=workspace, settings=settings, shown_as=shown_as)

    return step


def comparison_predictor(name: str) -> str:
    """``name`` if a comparison of two runs can take it (checked before the runs): the
    predictors that need no replay, since ``traffic`` and ``consensus`` replay one collection's
    queries with one embedder (``consensus`` on a comparison ended in a traceback)."""
    if check_predictor(name) in ("traffic", "consensus"):
        raise QueryValidationError(
            f"predictor '{name}' replays one collection's queries: a comparison of two runs "
            "takes 'scores' (each run's own score signals), 'judge' or 'none'.",
            field="predictor",
        )
    return name


def _predictions(
    side: EvalReport, queries: Sequence[PredictedQuery], predictor: str
) -> list[QueryPrediction]:
    """One side's predictions for ``queries``."""
    rows = side.per_query
    ctx = RunContext(scores=_scores(rows), rankings=_rankings(rows), dataset=side.dataset)
    made = PREDICTORS[comparison_predictor(predictor)](ctx)
    return made.predict(queries) if made is not None else []


def _gold(r: EvalReport, labelled: Sequence[str], name: str) -> dict[str, float]:
    """``name`` of each query a person labelled (``labelled``) in run ``r``."""
    return {q: r.per_query[q].metrics[name] for q in labelled if name in r.per_query[q].metrics}


def estimate_comparison(
    comparison: Comparison,
    a: EvalReport,
    b: EvalReport,
    *,
    predictor: str = "scores",
    plan: ComparisonPlan | None = None,
) -> Comparison:
    """``comparison`` (``compare_reports(a, b)``) with each metric's paired difference B − A
    and its interval, through :func:`~ragsonde.estimate.estimate_difference`:

    * ``classical``: over the labelled queries the tests ran on (Student's t), always;
    * ``ppi``, on a partly labelled benchmark: PPI++ over every query, from the labelled
      queries' differences and both sides' ``predictor`` predictions (``scores``: each run's
      own score signals; ``judge``: each run's metrics under the benchmark's LLM labels;
      ``none``: the labelled queries alone). The metric's ``significant``
      and ``verdict`` then follow this interval: significant only when it excludes 0.

    With ``plan`` (``judge --plan --versus``), the labels followed it: ``ppi`` is then its
    stratified estimate (:func:`~ragsonde.estimate.pair_plan.estimate_planned_difference`),
    with ``predictor``'s fixed prediction of the difference when it gives one.

    A report that records no labels (older reports) is left as it was."""
    ids = sorted(a.per_query)
    judged = _person_labelled(a) & _person_labelled(b)
    labelled = [q for q in ids if q in judged]
    if len(labelled) < MIN_LABELED:  # records no labels, or too few for an interval
        return comparison
    partly = len(labelled) < len(ids)
    if plan is not None and partly:
        return _planned(comparison, (a, b), ids, labelled, plan, predictor)
    pred_a: list[QueryPrediction] = []
    pred_b: list[QueryPrediction] = []
    if partly:
        queries = [PredictedQuery(query_id=q, text=a.per_query[q].query) for q in ids]
        pred_a = _predictions(a, queries, predictor)
        pred_b = _predictions(b, queries, predictor)
        comparison.significance = PPI_SIGNIFICANCE
    for m in comparison.metrics:
        gold_a, gold_b = _gold(a, labelled, m.metric), _gold(b, labelled, m.metric)
        estimate_paired(
            m,
            gold_a,
            gold_b,
            ids if partly else labelled,
            (pred_a, pred_b) if partly else None,
            alpha=comparison.alpha,
        )
    return comparison


def _depth(metric: str) -> int:
    """How deep a metric reads each ranking: its cutoff (``ndcg@10``: 10), else all of it."""
    _, at, k = metric.rpartition("@")
    return int(k) if at and k.isdigit() else 1_000_000


def _planned(
    comparison: Comparison,
    runs: tuple[EvalReport, EvalReport],
    ids: Sequence[str],
    labelled: Sequence[str],
    plan: ComparisonPlan,
    predictor: str,
) -> Comparison:
    """Each metric's difference under a comparison's judging plan (:func:`estimate_comparison`):
    significant only when its interval excludes 0."""
    import numpy as np

    a, b = runs
    predicted, signals, sources = None, None, []
    if predictor != "none":  # a fixed prediction of the difference, else both sides' signals
        queries = [PredictedQuery(query_id=q, text=a.per_query[q].query) for q in ids]
        fa = features(ids, _predictions(a, queries, predictor))
        fb = features(ids, _predictions(b, queries, predictor))
        if fa.predicted is not None and fb.predicted is not None:
            predicted = list(fb.predicted - fa.predicted)
        signals = np.hstack([fa.matrix, fb.matrix])
        sources = list(dict.fromkeys(fa.sources + fb.sources))
    comparison.significance = PPI_SIGNIFICANCE
    rankings = (_rankings(a.per_query), _rankings(b.per_query))
    for m in comparison.metrics:
        gold_a, gold_b = _gold(a, labelled, m.metric), _gold(b, labelled, m.metric)
        m.classical = estimate_difference(gold_a, gold_b, labelled, alpha=comparison.alpha)
        m.ppi = estimate_planned_difference(
            gold_a, gold_b, ids, plan, rankings, depth=_depth(m.metric), predicted=predicted,
            signals=signals, sources=sources, alpha=comparison.alpha,
        )  # fmt: skip
        _follow(m, m.ppi)
    return comparison


def _follow(m: MetricComparison, interval: MetricEstimate) -> None:
    """``m``'s verdict follows ``interval``: significant only when it excludes 0."""
    m.significant = interval.low > 0 or interval.high < 0
    m.verdict = (
        ("better" if interval.estimate > 0 else "worse")
        if m.significant
        else "no significant difference"
    )


def estimate_paired(
    m: MetricComparison,
    gold_a: Mapping[str, float],
    gold_b: Mapping[str, float],
    ids: Sequence[str],
    predictions: tuple[Sequence[QueryPrediction], Sequence[QueryPrediction]] | None,
    *,
    alpha: float = 0.05,
) -> MetricComparison:
    """``m`` (the paired tests of B against A) with its difference's intervals: ``classical``
    over the queries both sides have gold for; with ``predictions`` (A's, B's) and unlabelled
    queries among ``ids``, ``ppi`` over all of ``ids``, which ``significant`` and ``verdict``
    then follow (significant only when its interval excludes 0)."""
    labelled = [q for q in ids if q in gold_a and q in gold_b]
    both_a, both_b = ({q: g[q] for q in labelled} for g in (gold_a, gold_b))
    m.classical = estimate_difference(both_a, both_b, labelled, alpha=alpha)
    if predictions is not None and len(labelled) < len(ids):
        m.ppi = estimate_difference(gold_a, gold_b, ids, *predictions, alpha=alpha)
        _follow(m, m.ppi)
    return m


def _probabilities(plan: JudgingPlan, path: Path, ids: Sequence[str]) -> dict[str, float]:
    """The judging plan's chance of each of ``ids`` to be labelled; a query the plan does not
    know is a VALIDATION_ERROR (read as p = 1, a plan made for another benchmark, or before
    queries were added, weighed nothing and the estimate said nothing of it)."""
    missing = [q for q in ids if q not in plan.probabilities]
    if missing:
        raise QueryValidationError(
            f"plan: {len(missing)} of the {len(ids)} queries (e.g. {missing[0]}) are not in the "
            f"judging plan {path}; it was made for another benchmark, or before they were "
            "added. Plan again (`ragsonde judge BENCHMARK -c COLLECTION --plan N`), or estimate "
            "without --plan-file.",
            field="plan_file",
        )
    bad = next((q for q in ids if not 0.0 < plan.probabilities[q] <= 1.0), None)
    if bad is not None:  # p = 0 divided by zero; a negative one weighed its label negatively
        raise QueryValidationError(
            f"plan: query {bad}'s probability {plan.probabilities[bad]!r} in the judging plan "
            f"{path} is not in (0, 1]: the file was edited. Plan again.",
            field="plan_file",
        )
    return dict(plan.probabilities)


def estimate_versus(versus: VersusReport, options: EvalOptions) -> VersusReport:
    """Both runs of ``eval --versus``/``--against`` and their comparison, estimated: with
    ``options.estimate``, each side's ``metrics_ci`` (and its gates on the intervals); always,
    each compared metric's difference with its interval (:func:`estimate_comparison`)."""
    comparison_predictor(options.predictor)
    if options.estimate:
        for side in (versus.a, versus.b):
            estimate_report(side, options)
    read = read_plan(options.plan_file) if options.plan_file is not None else None
    plan = read if isinstance(read, ComparisonPlan) else None
    estimate_comparison(
        versus.comparison, versus.a, versus.b, predictor=options.predictor, plan=plan
    )
    return versus
