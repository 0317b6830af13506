"""Estimates on an evaluation's report: ``metrics_ci`` for a run of a partly labelled
benchmark, and PPI++ differences on a comparison of two such runs.

The estimate room sits above the evaluation (it reads reports; the traffic room's predictor
replays queries), so the evaluation does not call it: ``evaluate()`` with
``EvalOptions(estimate=True)`` keeps the benchmark's unlabelled rows and scores the labelled
ones, and the surfaces hand it :func:`estimating`'s step as its ``extend``. The step runs
:func:`estimate_report` (every metric's estimate, the gates again on it) on the finished report
before it is timed and recorded, so the report's ``seconds`` covers the estimate and the run in
the history carries its intervals. ``compare`` calls :func:`estimate_comparison`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragsonde.errors import QueryValidationError
from ragsonde.estimate.estimate import estimate_difference
from ragsonde.estimate.predictors import ScoreSignals
from ragsonde.estimate.run import RunContext, estimate_run, plan_probabilities
from ragsonde.models.prediction import PredictedQuery, QueryPrediction

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from ragsonde.evaluate.comparison import Comparison
    from ragsonde.evaluate.options import EvalOptions
    from ragsonde.evaluate.report import EvalReport, QueryRow

__all__ = ["estimate_comparison", "estimate_report", "estimating"]


def _scores(rows: Mapping[str, QueryRow]) -> dict[str, list[float]]:
    return {q: [s for _, s in row.retrieved] for q, row in rows.items()}


def _gold(report: EvalReport) -> set[str]:
    """The queries a person labelled: a machine's labels (generated, an LLM judge's) are never
    gold (they are predicted, as the unlabelled rows)."""
    machine = report.benchmark.machine_labels
    return {q for q, row in report.per_query.items() if row.relevant and q not in machine}


def estimate_report(
    report: EvalReport, options: EvalOptions, *, workspace: Any = None, settings: Any = None
) -> EvalReport:
    """``report`` with ``metrics_ci`` (every metric, ``options.predictor``'s predictions,
    ``options.plan_file``'s probabilities) and its gates evaluated again, on the intervals.
    ``workspace`` (else one opened on ``settings`` for the call): for a predictor that replays
    the queries (``traffic``)."""
    rows = report.per_query
    gold = _gold(report)
    if not gold:
        raise QueryValidationError(
            f"estimate: none of the {len(rows)} queries has a person's labels (a machine made "
            f"those of {len(report.benchmark.machine_labels)}), and an estimate rests on some. "
            "Judge a few (`ragsonde judge`, or the page's Judge view), then evaluate again.",
            field="estimate",
        )
    labelled = {q: row.metrics for q, row in rows.items() if q in gold}
    queries = [PredictedQuery(query_id=q, text=row.query) for q, row in rows.items()]
    plan = plan_probabilities(options.plan_file) if options.plan_file is not None else None
    from contextlib import nullcontext

    from ragsonde.workspace import using

    # a predictor that replays the queries needs a store and an embedder: the caller's, else
    # a workspace opened here for the call and closed here
    replays = workspace is None and options.predictor == "traffic"
    with using(settings=settings) if replays else nullcontext(workspace) as ws:
        ctx = RunContext(
            scores=_scores(rows),
            workspace=ws,
            search=report.search.params,
            collection=report.collection,
            probabilities=plan,
        )
        report.metrics_ci = estimate_run(
            queries, labelled, ctx, predictor=options.predictor, names=list(report.metrics)
        )
    report.gates = [g.evaluate(report) for g in options.parsed_gates]
    return report


def estimating(
    options: EvalOptions, *, workspace: Any = None, settings: Any = None
) -> Callable[[EvalReport], None] | None:
    """The extend step of an evaluation run with ``options``: :func:`estimate_report` when
    ``options.estimate``, else None (nothing to add). Hand it to ``evaluate(..., extend=…)``
    (or ``evaluate_explained``), so the estimate is timed and recorded with the run."""
    if not options.estimate:
        return None

    def step(report: EvalReport) -> None:
        estimate_report(report, options, workspace=workspace, settings=settings)

    return step


def _signals(
    rows: Mapping[str, QueryRow], queries: Sequence[PredictedQuery]
) -> list[QueryPrediction]:
    scores = _scores(rows)
    return ScoreSignals(lambda p: scores[p.query_id]).predict(queries)


def estimate_comparison(comparison: Comparison, a: EvalReport, b: EvalReport) -> Comparison:
    """``comparison`` (``compare_reports(a, b)``) with each metric's paired difference B − A
    estimated by PPI++ over every query, when the reports are of a partly labelled benchmark:
    the labelled queries' differences and both systems' score signals. Unchanged otherwise."""
    ids = sorted(a.per_query)
    judged = _gold(a) & _gold(b)
    labelled = len(judged)
    if labelled in (0, len(ids)):  # wholly labelled, or a report that records no labels
        return comparison
    queries = [PredictedQuery(query_id=q, text=a.per_query[q].query) for q in ids]
    sig_a, sig_b = _signals(a.per_query, queries), _signals(b.per_query, queries)
    for m in comparison.metrics:

        def gold(r: EvalReport, name: str = m.metric) -> dict[str, float]:
            return {
                q: r.per_query[q].metrics[name]
                for q in ids
                if q in judged and name in r.per_query[q].metrics
            }

        m.ppi = estimate_difference(gold(a), gold(b), ids, sig_a, sig_b, alpha=comparison.alpha)
    return comparison
