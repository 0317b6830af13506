"""``ragsonde history``: the recorded runs: list, show, diff, trend, prune, export.

Thin over :mod:`ragsonde.history`; ``--json`` prints the models whose schemas
``ragsonde schema history-list`` (… ``-show``, ``-diff``, ``-trend``, ``-prune``, ``-export``)
publishes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer
from rich.markup import escape
from rich.table import Table

from ragsonde.cli._common import (
    ConfigOpt,
    HomeOpt,
    JsonOpt,
    cli_errors,
    config_file_in_use,
    console,
    print_json,
    settings_from_options,
)
from ragsonde.cli.app import app

if TYPE_CHECKING:
    from pydantic import BaseModel

    from ragsonde.history import HistoryStore, RunDiff, RunShow, RunSummary, Trend

M = TypeVar("M", bound="BaseModel")

__all__ = ["HistoryOpt", "history_app", "open_history", "render_diff"]

history_app = typer.Typer(
    name="history",
    help="The recorded runs of `ragsonde eval` and `ragsonde traffic`: list, show, diff, trend, "
    "prune, export.",
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
#: The largest count an option takes (SQLite binds 64-bit integers; no history holds more runs).
_MAX_COUNT = 1_000_000_000


def history_file(
    history: Path | None, home: Path | None = None, config: Path | None = None
) -> Path:
    """The history file a command reads: ``--history``, else RAGSONDE_HISTORY, else
    ``<home>/history.sqlite``."""
    from ragsonde.history.record import history_path

    if history is not None:
        return history
    return history_path(settings_from_options(config=config, home=home).home)


def open_history(
    history: Path | None, home: Path | None = None, config: Path | None = None
) -> HistoryStore:
    from ragsonde.history.store import HistoryStore

    return HistoryStore(history_file(history, home, config))


@dataclass(frozen=True)
class _Where:
    """The history a subcommand reads (``--history``, ``--home``, ``--config``) and how it
    answers (``--json``)."""

    history: Path | None
    home: Path | None
    config: Path | None
    json_output: bool
    #: the files the subcommand writes, by option (checked before the history is opened)
    outputs: dict[str, Path | None] = field(default_factory=dict)
    #: whether it changes the history (a reading one leaves a missing or empty file as it is)
    writes: bool = False


def _answer(where: _Where, ask: Callable[[HistoryStore], M], show: Callable[[M], None]) -> None:
    """The one shape of every subcommand: check its outputs (never the history file), open the
    history, ``ask`` it (the store is closed after), then print the answer as JSON (``--json``)
    or ``show`` it. Errors are the command's ``@cli_errors``."""
    from ragsonde.history.store import HistoryStore
    from ragsonde.outputs import check_outputs

    path = history_file(where.history, where.home, where.config)
    if any(p is not None for p in where.outputs.values()):  # reading needs no settings module
        check_outputs(where.outputs, inputs=[config_file_in_use(where.config)], history=path)
    with HistoryStore(path, reading=not where.writes) as hs:
        out = ask(hs)
    if where.json_output:
        print_json(out)
    else:
        show(out)


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
            _verdict(r),
        )
    return table


def _verdict(run: RunSummary) -> str:
    """The gates column: FAIL, pass, or '-' for a run that had no gate to pass."""
    if not run.passed:
        return "FAIL"
    return "-" if run.gates == 0 else "pass"


@history_app.command("list")
@cli_errors
def list_command(
    benchmark: BenchmarkOpt = None,
    collection: CollectionFilterOpt = None,
    limit: Annotated[
        int | None, typer.Option(help="Only the newest N runs.", min=1, max=_MAX_COUNT)
    ] = None,
    history: HistoryOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """List the recorded runs, oldest first."""
    from ragsonde.history.models import RunList

    def ask(hs: HistoryStore) -> RunList:
        runs = hs.runs(benchmark=benchmark, collection=collection, limit=limit)
        return RunList(history=str(hs.path), runs=runs)

    def show(out: RunList) -> None:
        if out.runs:
            console.print(_summary_table(out.runs))
        else:
            console.print(f"no recorded runs in {escape(out.history)}")

    _answer(_Where(history, home, config_file, json_output), ask, show)


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
    from ragsonde.history import RunShow, resolve_run

    def ask(hs: HistoryStore) -> RunShow:
        run_id = resolve_run(hs, run)
        recorded = hs.get(run_id)
        return RunShow(
            run=recorded.summary,
            fingerprint=recorded.fingerprint,
            bands=hs.bands(run_id),
            warnings=recorded.report.warnings,
        )

    _answer(_Where(history, home, config_file, json_output), ask, _render_show)


def _render_show(out: RunShow) -> None:
    from ragsonde.history.trend import describe

    console.print(_summary_table([out.run]))
    estimated = out.run.metrics_ci or {}
    heads = ["metric", "value", "95% CI"] + (["estimate, 95 % interval"] if estimated else [])
    table = Table(*heads, box=None, pad_edge=False)
    for name, value in out.run.metrics.items():
        low, high = out.bands.get(name, (value, value))
        e = estimated.get(name)
        shown = [describe(e) if e else "-"] if estimated else []
        table.add_row(name, f"{value:.4f}", f"{low:.4f}…{high:.4f}", *shown)
    console.print(table)
    for name, value in out.fingerprint.flat().items():
        console.print(f"  {escape(name)} = {escape(str(value))}")


def render_diff(diff: RunDiff) -> None:
    """What changed, the metric table, and the flipped queries (with why, where the run in
    which a query missed was evaluated with --explain)."""
    from ragsonde.cli._estimate import render_paired
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
    if diff.not_comparable:
        console.print(f"[bold yellow]not comparable[/]: {escape(diff.not_comparable)}")
    render_paired(diff.metrics)  # runs of a partly labelled benchmark: PPI++ over every query
    if diff.flip_metric is None:
        return
    if not diff.flips:
        console.print(f"no query flipped between hit and miss on {diff.flip_metric}.")
        return
    console.print(f"queries that flipped on {diff.flip_metric}:")
    for f in diff.flips:
        arrow = "hit → miss" if f.direction == "lost" else "miss → hit"
        console.print(f"  {escape(f.query_id)}: {arrow}  {escape(f.query[:70])}")
        for why in f.why:  # one line each, however long its evidence (for grep and logs)
            line = f"      why (run {why.run_id}): {escape(why.describe(f.direction))}"
            console.print(line, soft_wrap=True)


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
    alpha: Annotated[
        float, typer.Option(help="Significance level of both tests.", min=0.0001, max=0.5)
    ] = 0.05,
    resamples: Annotated[
        int,
        typer.Option(
            help="Resamples of the permutation test and the bootstrap.", min=100, max=1_000_000
        ),
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
    queries that flipped between hit and miss (and why, where the runs were evaluated with
    --explain)."""
    from ragsonde.estimate import estimate_comparison
    from ragsonde.history import diff_runs, resolve_run

    def ask(hs: HistoryStore) -> RunDiff:
        a, b = hs.get(resolve_run(hs, run_a)), hs.get(resolve_run(hs, run_b))
        return diff_runs(
            a,
            b,
            metric,
            alpha=alpha,
            n_resamples=resamples,
            across_benchmarks=across_benchmarks,
            paired=estimate_comparison,
        )

    _answer(_Where(history, home, config_file, json_output), ask, render_diff)


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
    from ragsonde.history.trend import describe, trend, write_svg

    def ask(hs: HistoryStore) -> Trend:
        t = trend(hs, metric, benchmark=benchmark, collection=collection)
        if out is not None:
            write_svg(t, out)
        return t

    def show(t: Trend) -> None:
        values = [p.value for p in t.points]
        console.print(f"{metric}  {t.sparkline}  {values[0]:.4f} → {values[-1]:.4f}")
        for p in t.points:  # a run with an estimate, or after a change: its line
            if p.changed or p.interval:
                what = f"  {describe(p.interval)}" if p.interval else ""
                changed = f"  changed {escape(', '.join(p.changed))}" if p.changed else ""
                console.print(f"  run {p.run_id}: {p.value:.4f}{what}{changed}", soft_wrap=True)
        if out is not None:
            console.print(f"wrote plot: {out}")

    _answer(_Where(history, home, config_file, json_output, {"--out": out}), ask, show)


@history_app.command("prune")
@cli_errors
def prune_command(
    keep: Annotated[
        int,
        typer.Option(
            "--keep", help="How many of the newest runs to keep (1 or more).", min=1, max=_MAX_COUNT
        ),
    ],
    history: HistoryOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Delete all but the newest N runs."""
    from ragsonde.history.models import PruneResult

    def ask(hs: HistoryStore) -> PruneResult:
        deleted = hs.prune(keep)
        return PruneResult(history=str(hs.path), deleted=deleted, kept=len(hs.ids()))

    def show(r: PruneResult) -> None:
        console.print(f"deleted {r.deleted} run(s); {r.kept} kept in {escape(r.history)}")

    _answer(_Where(history, home, config_file, json_output, writes=True), ask, show)


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
    from ragsonde.history import ExportResult, resolve_run

    if out is not None and str(out) == "-":  # `-o -` was a file named "-" in the folder
        out = None

    def ask(hs: HistoryStore) -> ExportResult:
        ids = [resolve_run(hs, r) for r in runs] if runs else hs.ids()
        if out is None:
            n = hs.export(sys.stdout, ids)
        else:
            if not ids:  # an existing file would be replaced by nothing
                from ragsonde.errors import QueryValidationError

                raise QueryValidationError(
                    f"history {hs.path} holds no recorded run to export; nothing was written "
                    f"to {out}.",
                    field="out",
                )
            from ragsonde.outputs import open_output

            with open_output(out) as fh:
                n = hs.export(fh, ids)
        return ExportResult(history=str(hs.path), path=str(out or "-"), runs=n)

    def show(r: ExportResult) -> None:
        if out is not None:
            console.print(f"exported {r.runs} run(s) to {r.path}")

    # to stdout, the JSONL lines are the whole answer: no summary (JSON or text) after them
    where = _Where(history, home, config_file, json_output and out is not None, {"--out": out})
    _answer(where, ask, show)
