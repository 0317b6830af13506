"""``ragsonde judge --plan N``: the queries whose judgement narrows the interval most.

Evaluates the benchmark once (its unlabelled rows kept), takes each query's score signals,
and plans with :func:`ragsonde.estimate.plan.plan_judging`; traffic weights are read from the
rows' ``weight`` field (a traffic benchmark's, :mod:`ragsonde.traffic`) when there is one.
With ``--versus`` (B named as ``eval --versus`` names it) the plan is for the difference B − A:
both sides are evaluated and :func:`ragsonde.estimate.pair_plan.plan_comparison` plans from
their two rankings of each query.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from ragsonde.cli._common import console, print_json
from ragsonde.errors import QueryValidationError

if TYPE_CHECKING:
    from ragsonde.config import Settings
    from ragsonde.estimate.pair_plan import ComparisonPlan
    from ragsonde.estimate.plan import JudgingPlan
    from ragsonde.evaluate.report import EvalReport

__all__ = ["run_plan"]


def _weights(benchmark: Path) -> dict[str, float]:
    """Query id -> ``weight`` of a JSON Lines benchmark's rows that have one. The benchmark
    has been read (and checked) by the evaluation already: rows are numbered as its reader
    numbers them (a row without ``query_id`` is its entry number), and a ``weight`` that is not
    a positive number is a VALIDATION_ERROR naming the line, never read as weight 1."""
    from ragsonde.inputs import text_lines

    if benchmark.suffix != ".jsonl" or not benchmark.is_file():
        return {}
    out: dict[str, float] = {}
    entry = 0
    # the reader's lines: read_text() also ended a line at a lone "\r" (JSON whitespace in a
    # row), and the half row it made ended `judge --plan` in a JSONDecodeError traceback
    try:
        lines = list(text_lines(benchmark))
    except ValueError as e:  # changed since the evaluation read it
        raise QueryValidationError(f"Benchmark {benchmark}: {e}", field="dataset") from e
    for n, line in lines:
        if not line.strip():
            continue
        entry += 1
        row = json.loads(line)
        if not isinstance(row, dict) or "weight" not in row:
            continue
        weight = row["weight"]
        if (
            isinstance(weight, bool)
            or not isinstance(weight, int | float)
            or not math.isfinite(weight)
            or weight <= 0
        ):
            raise QueryValidationError(
                f"Benchmark {benchmark}: line {n}: weight {weight!r} is not a positive number "
                "(a query's traffic weight, as `ragsonde traffic` writes it).",
                field="weight",
            )
        out[str(row.get("query_id", entry))] = float(weight)
    return out


def make_plan(
    benchmark: Path,
    n: int,
    settings: Settings,
    *,
    target_width: float | None = None,
    metric: str = "ndcg@10",
    seed: int = 0,
) -> JudgingPlan:
    """The plan for ``benchmark`` (see the module)."""
    from ragsonde.estimate import ScoreSignals
    from ragsonde.estimate.plan import plan_judging
    from ragsonde.evaluate import EvalOptions, evaluate
    from ragsonde.evaluate.datasets import load_benchmark
    from ragsonde.models.prediction import PredictedQuery
    from ragsonde.workspace import Workspace

    bench = load_benchmark(benchmark, keep_unlabelled=True)  # before any search
    if all(q.relevant for q in bench.queries):
        raise QueryValidationError(
            f"plan {n}: nothing to plan, every one of the {len(bench.queries)} queries of "
            f"{benchmark} is labelled.",
            field="plan",
        )
    options = EvalOptions(k=[10], throughput=False, estimate=True, predictor="none")
    with Workspace(settings) as ws:
        report = evaluate(benchmark, options, ws, record=False)
    rows = report.per_query
    ids = list(rows)
    gold = {q: row.metrics[metric] for q, row in rows.items() if row.relevant}
    scores = {q: [s for _, s in row.retrieved] for q, row in rows.items()}
    predictor = ScoreSignals(lambda q: scores[q.query_id])
    preds = predictor.predict([PredictedQuery(query_id=q, text=rows[q].query) for q in ids])
    return plan_judging(
        ids,
        gold,
        preds,
        n,
        metric=metric,
        weights=_weights(benchmark),
        texts={q: row.query for q, row in rows.items()},
        target_width=target_width,
        seed=seed,
    )


def make_pair_plan(
    benchmark: Path,
    n: int,
    settings: Settings,
    *,
    versus: str,
    collection_b: str | None = None,
    seed: int = 0,
) -> ComparisonPlan:
    """The plan for the difference B − A on ``benchmark``: A the settings' embedder and
    collection, B ``versus`` (and ``collection_b``), as ``eval --versus`` runs them."""
    from ragsonde.evaluate import EvalOptions
    from ragsonde.evaluate.versus import evaluate_versus
    from ragsonde.workspace import Workspace

    options = EvalOptions(k=[10], throughput=False, estimate=True, predictor="none")
    collections = None if collection_b is None else (settings.collection, collection_b)
    with Workspace(settings) as ws:
        result = evaluate_versus(
            benchmark, (settings.embedder, versus), options, ws, collections=collections
        )
    systems = (f"{result.a.embedder} on {result.a.collection}",
               f"{result.b.embedder} on {result.b.collection}")  # fmt: skip
    return _plan_pair(result.a, result.b, n, systems=systems, seed=seed)


def pair_plan_from_reports(
    reports: tuple[Path, Path], n: int, *, benchmark: Path | None = None, seed: int = 0
) -> ComparisonPlan:
    """The plan for B − A from two saved eval reports (any two configurations: two modes, two
    fusions, two chunkings) run on the same partly labelled benchmark with ``--estimate``, which
    keeps its unlabelled queries. ``benchmark``, when given, must be that benchmark as it
    stands: the same queries, the same ones labelled."""
    from ragsonde.evaluate.saved import load_report

    a, b = (load_report(p) for p in reports)
    if set(a.per_query) != set(b.per_query):
        raise QueryValidationError(
            f"--pair: {reports[0]} and {reports[1]} hold different queries; save both from the "
            "same benchmark.",
            field="pair",
        )
    if benchmark is not None:
        _same_benchmark(benchmark, a, reports[0])
    if all(row.relevant for row in a.per_query.values()):
        raise QueryValidationError(
            f"--pair: {reports[0]} holds no unlabelled query, so there is nothing to plan. Save "
            "each side with `ragsonde eval BENCHMARK --estimate --save A.json`: an estimate "
            "keeps the unlabelled queries.",
            field="pair",
        )
    return _plan_pair(a, b, n, systems=(str(reports[0]), str(reports[1])), seed=seed)


def _same_benchmark(benchmark: Path, report: EvalReport, path: Path) -> None:
    """Refuse reports saved from another benchmark, or from this one before labels changed: the
    plan counts the reports' labels, and would plan queries already judged."""
    from ragsonde.evaluate.datasets import load_benchmark

    bench = load_benchmark(benchmark, keep_unlabelled=True)
    labelled = {q.query_id for q in bench.queries if q.relevant}
    saved = {q for q, row in report.per_query.items() if row.relevant}
    if {q.query_id for q in bench.queries} != set(report.per_query) or labelled != saved:
        raise QueryValidationError(
            f"--pair: {path} was not saved from {benchmark} as it stands ({len(saved)} of "
            f"{len(report.per_query)} queries labelled there, {len(labelled)} of "
            f"{len(bench.queries)} here). Save both sides again from it: `ragsonde eval "
            f"{benchmark} --estimate --save A.json`.",
            field="pair",
        )


def _plan_pair(
    a: EvalReport, b: EvalReport, n: int, *, systems: tuple[str, str], seed: int
) -> ComparisonPlan:
    """Plan B − A from the two sides' rankings of each query (a person's labels counted)."""
    from ragsonde.estimate.pair_plan import plan_comparison

    machine = a.benchmark.machine_labels
    labelled = {q for q, row in a.per_query.items() if row.relevant and q not in machine}
    return plan_comparison(
        list(a.per_query),
        {q: [d for d, _ in row.retrieved] for q, row in a.per_query.items()},
        {q: [d for d, _ in row.retrieved] for q, row in b.per_query.items()},
        labelled,
        n,
        texts={q: row.query for q, row in a.per_query.items()},
        systems=systems,
        seed=seed,
    )


def _show_pair(plan: ComparisonPlan) -> None:
    table = Table(title=f"judge these {len(plan.plan)} queries first (B − A, {plan.metric})")
    for col in ("query", "stratum", "spread", "probability", "text"):
        table.add_column(col, justify="right" if col in {"stratum", "spread"} else "left")
    for p in plan.plan:
        table.add_row(p.query_id, str(p.stratum), f"{p.spread:.3f}", f"{p.probability:.3f}",
                      p.text[:60])  # fmt: skip
    console.print(table)
    console.print(
        f"A: {plan.systems[0]}; B: {plan.systems[1]}. {plan.labelled_now} of "
        f"{plan.queries_total} queries labelled; {plan.exact} have identical top "
        f"{plan.depth} in both (their difference is 0 under any labels: never planned); the "
        f"rest in {len(plan.strata)} strata by how far the two top {plan.depth} differ. Keep "
        "the plan file: `eval --versus --plan-file` and `compare --plan-file` weigh the labels "
        "by it."
    )


def run_plan(
    benchmark: Path,
    n: int,
    settings: Settings,
    *,
    out: Path | None,
    target_width: float | None,
    json_output: bool,
    versus: str | None = None,
    collection_b: str | None = None,
    pair: tuple[Path, Path] | None = None,
    settings_file: Path | None = None,
) -> None:
    """Plan, write the plan file, and show it (``versus`` or ``pair``: a comparison's plan;
    ``settings_file``: the settings file the command read, an input the plan may not replace)."""
    from ragsonde.ingest.sources import input_files
    from ragsonde.outputs import check_outputs, write_text

    if target_width is not None and target_width <= 0:  # it was ignored without a word
        raise QueryValidationError(
            "--target-width: a width above 0 (no finite number of labels gives an interval of "
            "width 0).",
            field="target_width",
        )
    target = out or benchmark.with_name(f"{benchmark.stem}.plan.json")
    check_outputs(  # before any work
        {"--out": target}, inputs=[*input_files(benchmark), *(pair or ()), settings_file]
    )
    if pair is not None and (versus is not None or collection_b is not None):
        raise QueryValidationError(
            "--pair names both sides by their saved reports; leave out --versus and "
            "--collection-b.",
            field="pair",
        )
    if versus is not None or pair is not None:
        if target_width is not None:
            raise QueryValidationError(
                "--target-width plans one system's interval; with --versus or --pair, leave it "
                "out.",
                field="target_width",
            )
        if pair is not None:
            pair_plan = pair_plan_from_reports(pair, n, benchmark=benchmark)
        else:
            pair_plan = make_pair_plan(
                benchmark, n, settings, versus=str(versus), collection_b=collection_b
            )
        write_text(target, pair_plan.model_dump_json(indent=2))
        if json_output:
            print_json(pair_plan)
            return
        _show_pair(pair_plan)
        console.print(f"wrote plan: {target}")
        return
    if collection_b is not None:
        raise QueryValidationError(
            "--collection-b names B's collection: name B with --versus.", field="versus"
        )
    plan = make_plan(benchmark, n, settings, target_width=target_width)
    write_text(target, plan.model_dump_json(indent=2))
    if json_output:
        print_json(plan)
        return
    table = Table(title=f"judge these {len(plan.plan)} queries first ({plan.metric})")
    for col in ("query", "stratum", "predicted", "probability", "text"):
        table.add_column(col, justify="right" if col in {"stratum", "predicted"} else "left")
    for p in plan.plan:
        table.add_row(p.query_id, str(p.stratum), f"{p.predicted:.2f}", f"{p.probability:.3f}",
                      p.text[:60])  # fmt: skip
    console.print(table)
    now = f"{plan.width_now:.3f}" if plan.width_now is not None else "-"
    console.print(
        f"{plan.labelled_now} of {plan.queries_total} queries labelled; 95 % interval width "
        f"now {now}. Keep the plan file: `eval --estimate` weighs labels by their probability."
    )
    if plan.more_for_target is not None and (plan.labels_for_target or 0) > plan.queries_total:
        console.print(  # the 1/sqrt(n) rule past the benchmark's size: no judging reaches it
            f"width {plan.target_width}: about {plan.labels_for_target} labelled queries in "
            f"all, more than the benchmark's {plan.queries_total}: judging every query does "
            "not reach it; add queries (more traffic) or accept a wider interval"
        )
    elif plan.more_for_target is not None:
        console.print(
            f"width {plan.target_width}: about {plan.more_for_target} more judged queries "
            f"({plan.labels_for_target} labelled in all)"
        )
    console.print(f"wrote plan: {target}")
