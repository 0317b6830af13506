"""``ragsonde compare``: two saved reports in; deltas, paired significance tests, a CI gate out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragsonde.cli._common import JsonOpt, cli_errors, print_json
from ragsonde.cli.app import app

__all__ = ["compare_command"]


@app.command("compare")
@cli_errors
def compare_command(
    report_a: Annotated[Path, typer.Argument(help="The baseline report (eval --save).")],
    report_b: Annotated[Path, typer.Argument(help="The candidate report, on the same queries.")],
    metric: Annotated[
        list[str] | None,
        typer.Option("--metric", "-m", help="Metric to compare (repeatable) \\[default: all]."),
    ] = None,
    gate_no_regression: Annotated[
        bool,
        typer.Option(
            "--gate-no-regression",
            help="Exit 1 when B is significantly worse than A on a named metric "
            "(default: ndcg@10 when present, else every compared metric).",
        ),
    ] = False,
    alpha: Annotated[float, typer.Option(help="Significance level of both tests.")] = 0.05,
    resamples: Annotated[
        int,
        typer.Option(
            min=100, max=1_000_000, help="Resamples of the permutation test and the bootstrap."
        ),
    ] = 10000,
    seed: Annotated[
        int, typer.Option(min=0, max=2**32 - 1, help="Random seed of the resampling.")
    ] = 0,
    predictor: Annotated[
        str,
        typer.Option(
            help="Reports of a partly labelled benchmark: the predictions of PPI++'s "
            "difference: scores (each run's score signals), judge (each run's metrics under "
            "the benchmark's LLM labels) or none."
        ),
    ] = "scores",
    plan_file: Annotated[
        Path | None,
        typer.Option(
            "--plan-file",
            help="The comparison's judging plan the labels followed (judge --plan --versus): "
            "the difference is then its stratified estimate, unbiased under the plan.",
        ),
    ] = None,
    across_benchmarks: Annotated[
        bool,
        typer.Option(
            "--across-benchmarks",
            help="Compare reports whose same queries hold other labels or questions (refused "
            "otherwise): the difference is then the labels' as much as the systems'.",
        ),
    ] = False,
    json_output: JsonOpt = False,
) -> None:
    """Compare two saved eval reports: deltas, W/T/L, paired t-test, permutation test, CI."""
    try:
        from ragsonde.evaluate.compare import compare_reports
    except ImportError as e:
        raise typer.BadParameter(
            f"compare needs the eval extras ({e.name} is missing): pip install 'ragsonde[eval]'"
        ) from e
    from ragsonde.cli.render import render_comparison, render_gate
    from ragsonde.estimate import comparison_predictor, estimate_comparison
    from ragsonde.estimate.run import comparison_plan
    from ragsonde.evaluate.comparison import no_regression_gate
    from ragsonde.evaluate.saved import load_report

    comparison_predictor(predictor)  # whatever the reports: a predictor they cannot serve
    plan = comparison_plan(plan_file) if plan_file is not None else None  # before the tests
    a, b = load_report(report_a), load_report(report_b)
    comparison = compare_reports(
        a,
        b,
        metric,
        alpha=alpha,
        n_resamples=resamples,
        seed=seed,
        across_benchmarks=across_benchmarks,
    )
    if across_benchmarks:
        comparison.warnings.append(
            "compared across benchmarks (--across-benchmarks): where the labels or questions "
            "differ, so do the metrics, whatever the systems do"
        )
    # each difference's classical interval; PPI++'s over every query when partly labelled
    estimate_comparison(comparison, a, b, predictor=predictor, plan=plan)
    if gate_no_regression:
        comparison.gate = no_regression_gate(comparison, metric)
    gate = comparison.gate
    if json_output:
        print_json(comparison)
    else:
        render_comparison(comparison)
    if gate is not None and (not json_output or not gate.passed):
        render_gate(gate)
    if gate is not None and not gate.passed:
        raise typer.Exit(1)
