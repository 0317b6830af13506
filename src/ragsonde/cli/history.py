"""``ragsonde history``: the recorded runs: list, show, diff, trend, prune, export.

Thin over :mod:`ragsonde.evaluate.history`; ``--json`` prints the models whose schemas
``ragsonde schema history-list`` (… ``-show``, ``-diff``, ``-trend``, ``-prune``, ``-export``)
publishes.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ragsonde.cli._common import (
    ConfigOpt,
    HomeOpt,
    JsonOpt,
    cli_errors,
    console,
    print_json,
    settings_from_options,
)
from ragsonde.cli.app import app

if TYPE_CHECKING:
    from ragsonde.evaluate.history import HistoryStore, RunDiff, RunSummary

__all__ = ["HistoryOpt", "history_app", "open_history", "render_diff"]

history_app = typer.Typer(
    name="history",
    help="The recorded runs of `ragsonde eval`: list, show, diff, trend, prune, export.",
    no_args_is_help=True,
    rich_markup_mode="rich",
)
app.add_typer(history_app, name="history")

#: ``--history PATH``: the history file (default: RAGSONDE_HISTORY, else <home>/history.sqlite).
HistoryOpt = Annotated[
    Path | None,
    typer.Option(
        "--history",
        help="History file \\[default: RAGSONDE_HISTORY, else <home>/history.sqlite]",
    ),
]
BenchmarkOpt = Annotated[
    str | None,
    typer.Option("--benchmark", "-b", help="Only runs of this benchmark (name or hash)."),
]
CollectionFilterOpt = Annotated[
    str | None, typer.Option("--collection", "-c", help="Only runs on this collection.")
]
_SHOWN_METRICS = ("ndcg@10", "recall@10", "hit_rate@10", "mrr@10")


def open_history(
    history: Path | None, home: Path | None = None, config: Path | None = None
) -> HistoryStore:
    from ragsonde.evaluate.history import HistoryStore, history_path

    if history is None:
        history = history_path(settings_from_options(config=config, home=home).home)
    return HistoryStore(history)


def _summary_table(runs: list[RunSummary]) -> Table:
    table = Table(box=None, pad_edge=False)
    names = [m for m in _SHOWN_METRICS if any(m in r.metrics for r in runs)]
    for head in ("run", "when", "benchmark", "collection", "embedder", *names, "gates"):
        table.add_column(head, justify="right" if head == "run" or "@" in head else "left")
    for r in runs:
        table.add_row(
            str(r.run_id),
            r.created_at[:19].replace("T", " "),
            f"{r.benchmark} ({r.benchmark_sha256[:8]})",
            r.collection,
            r.embedder.rpartition("/")[2],
            *(f"{r.metrics[m]:.4f}" if m in r.metrics else "-" for m in names),
            "pass" if r.passed else "FAIL",
        )
    return table


@history_app.command("list")
@cli_errors
def list_command(
    benchmark: BenchmarkOpt = None,
    collection: CollectionFilterOpt = None,
    limit: Annotated[int | None, typer.Option(help="Only the newest N runs.")] = None,
    history: HistoryOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """List the recorded runs, oldest first."""
    from ragsonde.evaluate.history import RunList

    with open_history(history, home, config_file) as hs:
        runs = hs.runs(benchmark=benchmark, collection=collection, limit=limit)
        out = RunList(history=str(hs.path), runs=runs)
    if json_output:
        print_json(out)
        return
    if not runs:
        console.print(f"no recorded runs in {escape(out.history)}")
        return
    console.print(_summary_table(runs))


@history_app.command("show")
@cli_errors
def show_command(
    run: Annotated[str, typer.Argument(help="A run id, last, last~N or best.")],
    history: HistoryOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Show one run: its metrics with bootstrap intervals, and what it ran against."""
    from ragsonde.evaluate.history import RunShow, resolve_run

    with open_history(history, home, config_file) as hs:
        run_id = resolve_run(hs, run)
        recorded = hs.get(run_id)
        out = RunShow(
            run=recorded.summary,
            fingerprint=recorded.fingerprint,
            bands=hs.bands(run_id),
            warnings=recorded.report.warnings,
        )
    if json_output:
        print_json(out)
        return
    console.print(_summary_table([out.run]))
    table = Table("metric", "value", "95% CI", box=None, pad_edge=False)
    for name, value in out.run.metrics.items():
        low, high = out.bands.get(name, (value, value))
        table.add_row(name, f"{value:.4f}", f"{low:.4f}…{high:.4f}")
    console.print(table)
    for name, value in out.fingerprint.flat().items():
        console.print(f"  {escape(name)} = {escape(str(value))}")


def render_diff(diff: RunDiff) -> None:
    """What changed, the metric table, and the flipped queries."""
    from ragsonde.cli.render import metrics_table

    a, b = diff.a.run_id, diff.b.run_id
    console.print(f"[bold]run {b} vs run {a}[/]: {len(diff.changes)} fingerprint field(s) changed")
    for c in diff.changes:
        console.print(f"  {escape(c.describe())}")
    if diff.refused:
        console.print(f"[bold yellow]not compared[/]: {escape(diff.refused)}")
        return
    if not diff.like_for_like:
        console.print("[bold yellow]across benchmarks[/]: the labels or queries differ")
    console.print(metrics_table(f"run {b} (B) vs run {a} (A)", diff.metrics))
    if diff.flip_metric is None:
        return
    if not diff.flips:
        console.print(f"no query flipped between hit and miss on {diff.flip_metric}.")
        return
    console.print(f"queries that flipped on {diff.flip_metric}:")
    for f in diff.flips:
        arrow = "hit → miss" if f.direction == "lost" else "miss → hit"
        console.print(f"  {escape(f.query_id)}: {arrow}  {escape(f.query[:70])}")


@history_app.command("diff")
@cli_errors
def diff_command(
    run_a: Annotated[str, typer.Argument(help="The earlier run (id, last~1, best).")],
    run_b: Annotated[str, typer.Argument(help="The later run (id, last).")] = "last",
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            "-m",
            help="Metric to compare (repeatable) \\[default: ndcg, recall, mrr, hit_rate @10].",
        ),
    ] = None,
    alpha: Annotated[float, typer.Option(help="Significance level of both tests.")] = 0.05,
    resamples: Annotated[
        int, typer.Option(help="Resamples of the permutation test and the bootstrap.")
    ] = 10000,
    across_benchmarks: Annotated[
        bool,
        typer.Option(
            "--across-benchmarks",
            help="Compare metrics even when the queries or labels differ (marked as such).",
        ),
    ] = False,
    history: HistoryOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """What differs between two runs' fingerprints, their metrics (paired tests, CIs), and the
    queries that flipped between hit and miss."""
    from ragsonde.evaluate.history import diff_runs, resolve_run

    with open_history(history, home, config_file) as hs:
        a, b = hs.get(resolve_run(hs, run_a)), hs.get(resolve_run(hs, run_b))
    diff = diff_runs(
        a, b, metric, alpha=alpha, n_resamples=resamples, across_benchmarks=across_benchmarks
    )
    if json_output:
        print_json(diff)
    else:
        render_diff(diff)


@history_app.command("trend")
@cli_errors
def trend_command(
    metric: Annotated[str, typer.Argument(help="e.g. ndcg@10")],
    benchmark: BenchmarkOpt = None,
    collection: CollectionFilterOpt = None,
    out: Annotated[Path | None, typer.Option("--out", help="Write the plot (SVG) here.")] = Path(
        "trend.svg"
    ),
    history: HistoryOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """A metric run after run: a sparkline here, an SVG plot with bootstrap bands in --out."""
    from ragsonde.evaluate.history import trend, write_svg

    with open_history(history, home, config_file) as hs:
        t = trend(hs, metric, benchmark=benchmark, collection=collection)
    if out is not None:
        write_svg(t, out)
    if json_output:
        print_json(t)
        return
    values = [p.value for p in t.points]
    console.print(f"{metric}  {t.sparkline}  {values[0]:.4f} → {values[-1]:.4f}")
    for p in t.points:
        if p.changed:
            console.print(
                f"  run {p.run_id}: {p.value:.4f}  changed {escape(', '.join(p.changed))}"
            )
    if out is not None:
        console.print(f"wrote plot: {out}")


@history_app.command("prune")
@cli_errors
def prune_command(
    keep: Annotated[int, typer.Option("--keep", help="How many of the newest runs to keep.")],
    history: HistoryOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Delete all but the newest N runs."""
    from ragsonde.evaluate.history import PruneResult

    with open_history(history, home, config_file) as hs:
        deleted = hs.prune(keep)
        result = PruneResult(history=str(hs.path), deleted=deleted, kept=len(hs.ids()))
    if json_output:
        print_json(result)
    else:
        console.print(f"deleted {deleted} run(s); {result.kept} kept in {escape(result.history)}")


@history_app.command("export")
@cli_errors
def export_command(
    runs: Annotated[
        list[str] | None, typer.Argument(help="Runs to export \\[default: all].")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="JSONL file \\[default: stdout].")
    ] = None,
    history: HistoryOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Write runs as JSONL (fingerprint and whole report, one run a line): diff them in git,
    or give the file to `eval --baseline FILE.jsonl`."""
    from ragsonde.evaluate.history import ExportResult, resolve_run

    with open_history(history, home, config_file) as hs:
        ids = [resolve_run(hs, r) for r in runs] if runs else None
        if out is None:
            n = hs.export(sys.stdout, ids)
        else:
            with out.open("w", encoding="utf-8") as fh:
                n = hs.export(fh, ids)
        result = ExportResult(history=str(hs.path), path=str(out or "-"), runs=n)
    if out is None:
        return
    if json_output:
        print_json(result)
    else:
        console.print(f"exported {n} run(s) to {out}")
