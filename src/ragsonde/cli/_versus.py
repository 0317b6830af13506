"""``ragsonde eval … --versus B``: two embedders on one corpus, both reports, their comparison.

Not a command of its own: ``eval`` hands over here when ``--versus`` is given, so the two sides
take every ``eval`` option (cutoffs, mode, gates, …) unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ragsonde.cli._common import console, err_console, print_json
from ragsonde.errors import QueryValidationError

if TYPE_CHECKING:
    from ragsonde.evaluate import EvalOptions
    from ragsonde.workspace import Workspace

__all__ = [
    "AlphaOpt",
    "CollectionBOpt",
    "CorpusOpt",
    "GateNoRegressionOpt",
    "MetricOpt",
    "VersusOpt",
    "run_versus",
]

_SIDES = ("A", "B")
_PANEL = "Two embedders (--versus)"

#: ``--versus``: embedder B; A is ``--embedder`` (or the configured one).
VersusOpt = Annotated[
    str | None,
    typer.Option(
        "--versus",
        help="Embedder B, e.g. openai:text-embedding-3-small: evaluate A (--embedder) and B on "
        "the same queries, then compare them with paired tests. Each gets its own collection, "
        "<collection>__<embedder slug>, ingested when missing.",
        rich_help_panel=_PANEL,
    ),
]
#: ``--collection-b``: B's collection, making ``-c`` A's (no derived names).
CollectionBOpt = Annotated[
    str | None,
    typer.Option(
        "--collection-b",
        help="B's collection; -c is then A's, both used as named.",
        rich_help_panel=_PANEL,
    ),
]
#: ``--metric/-m``: what the comparison (and its gate) looks at.
MetricOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--metric",
        "-m",
        help="Metric to compare (repeatable) \\[default: all].",
        rich_help_panel=_PANEL,
    ),
]
#: ``--gate-no-regression``: as ``ragsonde compare``'s.
GateNoRegressionOpt = Annotated[
    bool,
    typer.Option(
        "--gate-no-regression",
        help="Exit 1 when B is significantly worse than A on a named metric "
        "(default: ndcg@10 when present, else every compared metric).",
        rich_help_panel=_PANEL,
    ),
]
#: ``--alpha``: significance level of both paired tests.
AlphaOpt = Annotated[
    float,
    typer.Option(help="Significance level of both paired tests.", rich_help_panel=_PANEL),
]
#: ``--corpus``: what ``--ingest`` (and ``--versus``) ingest when a collection is missing.
CorpusOpt = Annotated[
    str | None,
    typer.Option(
        help="Documents to ingest when the collection is missing (any `ragsonde ingest` "
        "source) \\[default: the BEIR folder's corpus.jsonl]."
    ),
]


def run_versus(
    dataset: str,
    workspace: Workspace,
    options: EvalOptions,
    *,
    corpus: str | None,
    versus: str | None,
    collection_b: str | None,
    metrics: Sequence[str] | None,
    gate_no_regression: bool,
    alpha: float,
    outputs: Mapping[str, Path | None],
    json_output: bool,
) -> None:
    """Evaluate the workspace's embedder (A) against ``versus`` (B) on its store, print, and
    exit 1 on a failed ``--gate`` of either side or, with ``gate_no_regression``, a significant
    regression of B. ``outputs``: the files the command was given, by flag: ``--save`` (both
    reports and their comparison) and ``--report`` (the comparison's page) are written; any
    other (one report's, as ``--run-out``) is refused."""
    save, html = outputs.get("--save"), outputs.get("--report")
    single_report_outputs = {
        flag: path for flag, path in outputs.items() if flag not in ("--save", "--report")
    }
    if versus is None:
        raise QueryValidationError(
            "--collection-b, --metric, --alpha and --gate-no-regression compare two embedders: "
            "name the second one with --versus.",
            field="versus",
        )
    given = [flag for flag, path in single_report_outputs.items() if path is not None]
    if given:
        raise QueryValidationError(
            f"{', '.join(given)} write one report; with --versus, --save writes both reports "
            "and their comparison, --report the comparison's HTML page.",
            field="versus",
        )
    from ragsonde.cli.progress import RichProgress
    from ragsonde.cli.render import render_comparison, render_gate, render_side
    from ragsonde.estimate import comparison_predictor, estimate_versus
    from ragsonde.evaluate.comparison import no_regression_gate
    from ragsonde.evaluate.versus import evaluate_versus

    comparison_predictor(options.predictor)  # before either side runs
    settings = workspace.settings
    collections = None if collection_b is None else (settings.collection, collection_b)
    enabled = not json_output and err_console.is_terminal
    with RichProgress(enabled, "queries", passes=_SIDES) as bars:
        result = evaluate_versus(
            dataset,
            (settings.embedder, versus),
            options,
            workspace,
            collections=collections,
            metrics=metrics,
            alpha=alpha,
            progress=bars,
            corpus=corpus,
        )
    estimate_versus(result, options)  # each difference's interval; PPI++ when partly labelled
    if gate_no_regression:
        result.comparison.gate = no_regression_gate(result.comparison, metrics)
    gate = result.comparison.gate
    if save is not None:
        from ragsonde.outputs import write_text

        write_text(save, result.model_dump_json(indent=2))
    if html is not None:
        from ragsonde.evaluate.compare_html import write_html_comparison

        write_html_comparison(result, html)
    if json_output:
        print_json(result)
    else:
        for side, report in zip(_SIDES, (result.a, result.b), strict=True):
            render_side(side, report)
        console.rule("[bold]B vs A[/]")
        render_comparison(result.comparison)
        if save is not None:
            console.print(f"wrote both reports and the comparison: {save}")
        if html is not None:
            console.print(f"wrote the comparison's HTML page: {html}")
    if gate is not None and (not json_output or not gate.passed):
        render_gate(gate)
    failed = [
        f"{side}: {g.gate}"
        for side, report in zip(_SIDES, (result.a, result.b), strict=True)
        for g in report.gates
        if not g.passed
    ]
    if failed:
        err_console.print(f"[bold red]gates failed[/]: {', '.join(failed)}")
    if failed or (gate is not None and not gate.passed):
        raise typer.Exit(1)
