"""``ragsonde traffic``: which of the questions users really ask does retrieval fail? No labels."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ragsonde.cli._common import (
    CollectionOpt,
    ConfigOpt,
    EmbedderOpt,
    FieldOpt,
    HomeOpt,
    JsonOpt,
    VectorOpt,
    cli_errors,
    config_file_in_use,
    console,
    err_console,
    parse_fields,
    settings_from_options,
)
from ragsonde.cli._search import search_options
from ragsonde.cli.app import app

if TYPE_CHECKING:
    from ragsonde.traffic.report import TrafficReport

__all__ = ["traffic_command"]


#: The reasons a run's skipped records were not read, shown on the terminal (the JSON keeps ten).
SKIPS_SHOWN = 3


def _time(value: str | None, what: str) -> datetime | None:
    if value is None:
        return None
    from ragsonde.errors import QueryValidationError
    from ragsonde.traffic.logs import RowError, parse_time

    if not value.strip():  # '' read as no window at all, without a word
        raise QueryValidationError(
            f"{what}: give a time (ISO 8601 or epoch seconds), or leave the option out.",
            field=what.lstrip("-"),
        )
    try:
        return parse_time(value)
    except RowError as e:
        raise QueryValidationError(f"{what}: {e}", field=what.lstrip("-")) from None


def render(report: TrafficReport, shown: int = 10) -> None:
    """The report on the terminal: weak share, production, the weakest, topics, drift."""
    from rich.markup import escape
    from rich.table import Table

    from ragsonde.models.query import DEFAULT_LIMITS
    from ragsonde.models.text import terminal_safe
    from ragsonde.traffic.html import explain_command

    lo, hi = report.weak_share_interval
    read = report.read
    console.print(
        f"[bold]{report.n_queries}[/] distinct queries ({report.n_records} asked) against "
        f"[bold]{escape(report.collection)}[/], {report.search.mode} top_k {report.search.top_k}"
    )
    if read.malformed or read.no_query_text or read.outside_window or read.sampled_out:
        console.print(
            f"skipped: {read.malformed} malformed, {read.no_query_text} without query text, "
            f"{read.outside_window} outside the window, {read.sampled_out} sampled out"
        )
        for example in read.examples[:SKIPS_SHOWN]:  # why, as the HTML and the page say
            console.print(f"  [dim]{escape(terminal_safe(example))}[/]", soft_wrap=True)
        more = read.malformed + read.no_query_text - min(len(read.examples), SKIPS_SHOWN)
        if more > 0:
            kept = len(read.examples)
            console.print(f"  [dim]… {more} more (the JSON report, -o, gives the first {kept})[/]")
    console.print(
        f"weak share [bold]{100 * report.weak_share:.1f}%[/] (95% {100 * lo:.1f}–{100 * hi:.1f}%;"
        f" by frequency {100 * report.weak_share_weighted:.1f}%), weak = predicted < "
        f"{report.weak_below:.3g}"
    )
    if report.flag_reading:
        console.print(f"[dim]{escape(report.flag_reading)}[/]", soft_wrap=True)
    # how predicted was made: a --labels run's weak cut (e.g. 0.864972) read as if fixed
    line = f"predicted: {report.combination}"
    if report.crossfit is not None:
        line += f"; out-of-fold Spearman {report.crossfit.out_of_fold_spearman:+.3f}"
    console.print(escape(line), soft_wrap=True)
    if report.production is not None:
        verdict = escape(terminal_safe(report.production.verdict))
        console.print(
            f"production vs replay: mean agreement {report.production.mean_agreement:.2f} over "
            f"{report.production.n_queries} queries. {verdict}"
        )
    table = Table(title="Weakest queries", title_justify="left")
    for col in ("query", "predicted", "asked", "evidence"):
        table.add_column(col)
    by_id = {q.query_id: q for q in report.queries}
    for qid in report.weakest[:shown]:
        q = by_id[qid]
        evidence = ", ".join(
            f"{n} {q.signals[n]:.3g}" for n in ("top1", "gap", "nqc", "rbo") if n in q.signals
        )
        table.add_row(
            escape(terminal_safe(q.query[:80])),
            f"{q.predicted:.3f}" if q.predicted is not None else "–",
            str(q.weight),
            escape(evidence + ("; " + "; ".join(q.mismatch) if q.mismatch else "")),
        )
    console.print(table)
    if report.weakest:
        first = by_id[report.weakest[0]]
        if len(first.query) <= DEFAULT_LIMITS.max_query_chars or report.saved_benchmark:
            console.print(f"next: {escape(terminal_safe(explain_command(report, first)))}")
        else:  # `ragsonde query` refuses it, and the line would fill the terminal
            console.print(
                f"next: the weakest query is {len(first.query):,} characters long, over the "
                f"{DEFAULT_LIMITS.max_query_chars:,} a query may have: see it in the JSON (--json)"
            )
    for t in report.topics:
        console.print(f"topic [bold]{escape(terminal_safe(t.name))}[/]: {t.n_queries} weak queries")
    for p in report.drift[-14:]:
        console.print(
            f"{report.drift_unit} {p.period}: weak {100 * p.weak_share:.1f}% of {p.n_queries}"
        )


@app.command("traffic")
@cli_errors
@search_options("mode", "top_k", "threshold", "fusion", "hnsw_ef")
def traffic_command(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="Query logs (JSON Lines, CSV) or OTLP JSON traces (also .gz); the format is "
            "read from the content."
        ),
    ],
    collection: CollectionOpt = None,
    since: Annotated[
        str | None,
        typer.Option(
            help="Only queries at or after this time (ISO 8601 or epoch seconds); records "
            "without a time are left out."
        ),
    ] = None,
    until: Annotated[
        str | None, typer.Option(help="Only queries before this time (as --since).")
    ] = None,
    sample: Annotated[
        int | None,
        typer.Option(help="Analyse N distinct queries, sampled by day \\[default: all]."),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, max=2**32 - 1, help="The sample's seed.")] = 0,
    weak_below: Annotated[
        float,
        typer.Option(help="A query is weak when predicted is below this (0 to 1)."),
    ] = 0.1,  # ragsonde.traffic.predictor.WEAK_BELOW (not imported: the CLI starts light)
    save: Annotated[
        Path | None,
        typer.Option(help="Save the traffic as an unlabelled benchmark (.jsonl) for judge/eval."),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option(
            help="A labelled benchmark of some of these queries (matched by text): predicted "
            "is cross-fitted on them."
        ),
    ] = None,
    html: Annotated[Path | None, typer.Option(help="Write the report as an HTML page.")] = None,
    record: Annotated[
        bool | None,
        typer.Option(
            "--record/--no-record",
            help="Record the run in the history \\[default: RAGSONDE_RECORD, on].",
        ),
    ] = None,
    history: Annotated[
        Path | None,
        typer.Option(help="History file \\[default: RAGSONDE_HISTORY or <home>/history.sqlite]."),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the JSON report to this file.")
    ] = None,
    field_paths: FieldOpt = None,
    vector: VectorOpt = None,
    embedder: EmbedderOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
    search: dict[str, Any] | None = None,
) -> None:
    """Which questions does retrieval fail? Read production traffic (logs or traces), replay
    each query, and predict its health from label-free signals."""

    from ragsonde.cli.progress import RichProgress
    from ragsonde.traffic.run import TrafficOptions, traffic_report
    from ragsonde.workspace import Workspace

    settings = settings_from_options(
        config=config_file,
        collection=collection,
        home=home,
        embedder=embedder,
        vector=vector,
        mapping=parse_fields(field_paths),
        search=search,
    )
    options = TrafficOptions(  # a bad value: VALIDATION_ERROR naming it
        since=_time(since, "--since"),
        until=_time(until, "--until"),
        sample=sample,
        seed=seed,
        weak_below=weak_below,
        save=save,
        labels=labels,
        record=record,
        history=history,
    )
    from ragsonde.history import history_path
    from ragsonde.outputs import check_output, check_outputs

    # before any work: never an input, the history file, or one file twice
    inputs = [*files, labels, config_file_in_use(config_file)]
    check_outputs(
        {"--output": output, "--save": save, "--html": html},
        inputs=inputs,
        history=history_path(settings.home, history),
        rows=["--save"],
    )
    if history is not None:
        path = history_path(settings.home, history)
        check_output(path, "--history", inputs=inputs, database=True)
    with (
        Workspace(settings) as ws,
        RichProgress(not json_output and err_console.is_terminal, "queries") as bar,
    ):
        report = traffic_report(files, ws, options, progress=bar)
    with report:  # its spool deleted when done, stopped (Ctrl-C, SIGTERM) or failing
        _show(report, output, html, json_output)


def _show(report: TrafficReport, output: Path | None, html: Path | None, as_json: bool) -> None:
    """The report written where the command line asked, and on the terminal."""
    from ragsonde.outputs import open_output

    if output is not None:
        with open_output(output) as f:
            report.write_json(f)
    if html is not None:
        from ragsonde.traffic.html import write_html

        write_html(report, html)
    if as_json:
        import sys

        report.write_json(sys.stdout)  # every query, streamed from the report's spool
        sys.stdout.write("\n")
        sys.stdout.flush()
        return
    render(report)
