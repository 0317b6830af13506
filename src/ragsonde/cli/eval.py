"""``ragsonde eval``: a benchmark in; metrics, latency, integrity, reports and a CI verdict out."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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
    print_json,
    settings_from_options,
)
from ragsonde.cli._eval_options import eval_options
from ragsonde.cli._mcp_eval import McpArgOpt, McpHeaderOpt, McpMapOpt, McpOpt, ToolOpt
from ragsonde.cli._versus import (
    AlphaOpt,
    CollectionBOpt,
    CorpusOpt,
    GateNoRegressionOpt,
    MetricOpt,
    VersusOpt,
    run_versus,
)
from ragsonde.cli.app import app
from ragsonde.cli.history import HistoryOpt
from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.options import EvalOptions
from ragsonde.outputs import check_outputs, write_text

if TYPE_CHECKING:
    from ragsonde.evaluate import EvalReport
    from ragsonde.workspace import Workspace

__all__ = ["eval_command"]


@app.command("eval")
@cli_errors
@eval_options(
    "mode",
    "threshold",
    "fusion",
    "rrf_k",
    "fusion_weights",
    "prefetch_limit",
    "hnsw_ef",
    "exact",
    "rescore",
    "oversampling",
)
def eval_command(
    dataset: Annotated[
        str,
        typer.Argument(
            help="A BEIR folder, TREC qrels (with --queries), or a .jsonl/.yaml benchmark."
        ),
    ],
    options: EvalOptions,
    collection: CollectionOpt = None,
    ingest: Annotated[
        bool, typer.Option("--ingest", help="Ingest the dataset's corpus first when missing.")
    ] = False,
    report: Annotated[Path | None, typer.Option(help="Write a self-contained HTML report.")] = None,
    run_out: Annotated[Path | None, typer.Option(help="Write a TREC run file.")] = None,
    save: Annotated[Path | None, typer.Option(help="Write the whole report as JSON.")] = None,
    field_paths: FieldOpt = None,
    vector: VectorOpt = None,
    against: Annotated[
        str | None,
        typer.Option(
            "--against",
            help="A Qdrant URL holding a copy of the collection (http(s)://host:port, "
            "path:/dir): run the benchmark on the embedded collection and on the copy, and "
            "compare them per query with paired tests.",
        ),
    ] = None,
    explain: Annotated[
        bool,
        typer.Option(
            "--explain",
            help="Blame each missed relevant document on the pipeline stage that lost it "
            "(a 'misses' section: stage histogram, worst queries, retrievability).",
        ),
    ] = False,
    explain_k: Annotated[
        int,
        typer.Option("--explain-k", min=1, max=1000, help="--explain: a miss is outside top k."),
    ] = 10,
    corpus: CorpusOpt = None,
    embedder: EmbedderOpt = None,
    versus: VersusOpt = None,
    collection_b: CollectionBOpt = None,
    metric: MetricOpt = None,
    gate_no_regression: GateNoRegressionOpt = False,
    alpha: AlphaOpt = 0.05,
    record: Annotated[
        bool,
        typer.Option(
            "--record/--no-record",
            help="Record the run in the history (RAGSONDE_RECORD=0 turns it off).",
        ),
    ] = True,
    history: HistoryOpt = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            help="Compare with a recorded run of the same benchmark (last, best, a run id) or "
            "an exported FILE.jsonl; exit 1 on a significant regression of ndcg@10.",
        ),
    ] = None,
    mcp: McpOpt = None,
    tool: ToolOpt = None,
    arg: McpArgOpt = None,
    item_map: McpMapOpt = None,
    mcp_header: McpHeaderOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Evaluate retrieval: IR metrics, latency, integrity, gates (exit 1 on a failed gate).

    Exit 1 too when the benchmark's relevant ids resolve to no payload field, or more than half
    of them are missing from the collection (unless --allow-missing), or with --baseline when
    it is significantly worse than the baseline. Each run is recorded (`ragsonde history`)."""
    if mcp is not None or tool is not None:
        from ragsonde.cli._mcp_eval import refuse_unused, run_mcp_eval

        refuse_unused({
            "--report": report, "--run-out": run_out, "--ingest": ingest, "--against": against,
            "--explain": explain, "--corpus": corpus, "--collection-b": collection_b,
            "--metric": metric, "--gate-no-regression": gate_no_regression,
            "--alpha": alpha != 0.05, "--history": history, "--baseline": baseline,
        })  # fmt: skip

        if mcp is None:
            raise QueryValidationError(
                "--tool names a tool of an --mcp server: give --mcp.", field="mcp"
            )
        run_mcp_eval(
            dataset,
            server=mcp,
            tool=tool,
            args=arg,
            item_map=item_map,
            headers=mcp_header,
            versus=versus,
            settings=settings_from_options(
                config=config_file,
                collection=collection,
                home=home,
                embedder=embedder,
                vector=vector,
                mapping=parse_fields(field_paths),
            ),
            options=options,
            save=save,
            json_output=json_output,
            settings_file=config_file_in_use(config_file),
        )
        return
    comparing = bool(
        versus is not None or collection_b or metric or gate_no_regression or alpha != 0.05
    )
    if explain and (comparing or against is not None):
        raise QueryValidationError(
            "explain: --explain explains one evaluation; run it without --versus/--against "
            "(or on each collection alone).",
            field="explain",
        )
    if baseline is not None and (not record or versus is not None or against is not None):
        raise QueryValidationError(
            "--baseline compares the recorded run with a baseline: it needs the run recorded "
            "(drop --no-record, or record into a scratch file with --history) and one "
            "collection (not --versus or --against).",
            field="baseline",
        )
    if baseline is not None:  # the paired difference's predictor, refused before the run
        from ragsonde.estimate import comparison_predictor

        comparison_predictor(options.predictor)
    from ragsonde.workspace import Workspace

    settings = settings_from_options(
        config=config_file,
        collection=collection,
        home=home,
        embedder=embedder,
        vector=vector,
        mapping=parse_fields(field_paths),
    )
    _check_first(
        settings.home,
        history,
        baseline,
        record=record,
        outputs={"--save": save, "--report": report, "--run-out": run_out},
        inputs=[
            dataset,
            options.queries_file,
            options.plan_file,
            corpus,
            baseline,
            config_file_in_use(config_file),
        ],
    )
    with recording(record, history), Workspace(settings) as ws:
        if comparing:
            run_versus(
                dataset,
                ws,
                options,
                corpus=corpus,
                versus=versus,
                collection_b=collection_b,
                metrics=metric,
                gate_no_regression=gate_no_regression,
                alpha=alpha,
                outputs={"--save": save, "--report": report, "--run-out": run_out},
                json_output=json_output,
            )
        elif against is not None:
            _run_against(dataset, against, ws, options, (save, report, run_out), json_output)
        else:
            result = _evaluate_one(
                dataset,
                ws,
                options,
                json_output,
                ingest=ingest,
                corpus=corpus,
                explain_k=explain_k if explain else None,
            )
            _write(result, save=save, run_out=run_out, html=report)
            _show(
                result,
                json_output,
                {"report JSON": save, "TREC run": run_out, "HTML report": report},
            )
            regressed = baseline is not None and not _meets_baseline(
                result,
                baseline,
                history,
                settings.home,
                predictor=options.predictor,
                json_output=json_output,
            )
            _exit_on_failure(result, regressed)


def _evaluate_one(
    dataset: str,
    ws: Workspace,
    options: EvalOptions,
    json_output: bool,
    *,
    ingest: bool,
    corpus: str | None,
    explain_k: int | None,
) -> EvalReport:
    """The one evaluation, with a progress bar on a terminal (not with --json); with
    ``explain_k``, its misses explained before it is timed and recorded (``--explain``); with
    ``options.estimate``, its metrics estimated (:func:`ragsonde.estimate.estimating`), both
    timed and recorded with the run (from the command's start: ``STARTED``)."""
    from ragsonde.cli.app import STARTED
    from ragsonde.cli.progress import RichProgress
    from ragsonde.evaluate import evaluate

    step = None
    if options.estimate:  # --estimate: every metric with its interval, the gates on them
        from ragsonde.estimate import estimating

        step = estimating(options, workspace=ws)
    with RichProgress(not json_output and err_console.is_terminal, "queries") as bar:
        if explain_k is None:
            return evaluate(
                dataset,
                options,
                ws,
                progress=bar,
                ingest=ingest,
                corpus=corpus,
                extend=step,
                started=STARTED,
            )
        from ragsonde.explain import evaluate_explained

        return evaluate_explained(
            dataset,
            options,
            ws,
            k=explain_k,
            extend=step,
            progress=bar,
            ingest=ingest,
            corpus=corpus,
            started=STARTED,
        )


def _write(
    result: EvalReport, *, save: Path | None, run_out: Path | None, html: Path | None
) -> None:
    """``--save``, ``--run-out`` and ``--report``: the report as JSON, TREC run and HTML."""
    if save is not None:
        write_text(save, result.model_dump_json(indent=2))
    if run_out is not None:
        result.write_run(run_out)
    if html is not None:
        from ragsonde.evaluate.html import write_html_report

        write_html_report(result, html)


def _show(result: EvalReport, json_output: bool, written: dict[str, Path | None]) -> None:
    """The report on stdout: as JSON, or as tables with what was written and recorded."""
    if json_output:
        print_json(result)
        return
    from ragsonde.cli.render import render_report

    render_report(result)
    if result.misses is not None:
        from ragsonde.cli._misses import render_misses

        render_misses(result.misses)
    if result.judged_only:
        console.print(
            "[bold]scored over judged hits only[/] (--judged-only): unjudged hits were "
            "dropped, not counted as misses"
        )
    for what, path in written.items():
        if path is not None:
            console.print(f"wrote {what}: {path}")
    if result.history_run is not None:
        console.print(f"recorded as run {result.history_run} (`ragsonde history show`)")


def _exit_on_failure(result: EvalReport, regressed: bool) -> None:
    """Exit 1 on a failed gate (named on stderr), or a regression against the baseline."""
    if not result.passed:
        failed = [g.gate for g in result.gates if not g.passed]
        err_console.print(f"[bold red]gates failed[/]: {', '.join(failed)}")
        raise typer.Exit(1)
    if regressed:
        raise typer.Exit(1)


def _meets_baseline(
    result: EvalReport,
    spec: str,
    history: Path | None,
    home: Path,
    *,
    predictor: str,
    json_output: bool,
) -> bool:
    """``--baseline``: the recorded run against its baseline, each metric's difference by
    PPI++ on a partly labelled benchmark (with ``predictor``'s predictions, as
    ``--versus``); passed (or nothing recorded)? The diff goes to stderr with --json (stdout
    holds the report)."""
    from functools import partial

    from ragsonde.cli.history import render_diff
    from ragsonde.cli.render import render_gate
    from ragsonde.estimate import estimate_comparison
    from ragsonde.history import history_path
    from ragsonde.history.baseline import against_baseline

    if result.history_run is None:
        return True
    paired = partial(estimate_comparison, predictor=predictor)
    path = history_path(home, history)
    base, diff = against_baseline(result.history_run, spec, path, paired=paired)
    if json_output:  # stdout holds the report alone: the diff (and its gate) on stderr
        err_console.print_json(diff.model_dump_json())
    else:
        console.rule(f"[bold]against baseline run {base.summary.run_id}[/]")
        render_diff(diff)
        if diff.gate is not None:
            render_gate(diff.gate)
    return diff.gate is None or diff.gate.passed


def _check_first(
    home: Path,
    history: Path | None,
    baseline: str | None,
    *,
    record: bool,
    outputs: dict[str, Path | None],
    inputs: list[Path | str | None],
) -> None:
    """What can be checked before the evaluation runs, so that a refused command has recorded
    nothing and thrown no work away: the outputs (never the history or an input), the history
    file's health (when the run is recorded or gated) and the baseline."""
    from ragsonde.history import HistoryStore, history_path
    from ragsonde.history.baseline import check_baseline
    from ragsonde.history.record import recording_on
    from ragsonde.ingest.sources import input_files

    path = history_path(home, history)
    # a folder's documents (the corpus, a BEIR dataset's files) are inputs one by one
    check_outputs(outputs, inputs=[f for i in inputs for f in input_files(i)], history=path)
    if (record and recording_on()) or baseline is not None:
        with HistoryStore(path):
            pass
    if baseline is not None:
        check_baseline(baseline, path)


@contextmanager
def recording(record: bool, history: Path | None) -> Iterator[None]:
    """``--no-record`` and ``--history`` for every evaluation the command runs (the versus and
    against paths evaluate twice), through the variables the history reads; restored after."""
    from ragsonde.history.record import ENV_HISTORY, ENV_RECORD

    saved = {name: os.environ.get(name) for name in (ENV_HISTORY, ENV_RECORD)}
    if not record:
        os.environ[ENV_RECORD] = "0"
    if history is not None:
        os.environ[ENV_HISTORY] = str(history)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _run_against(
    dataset: str,
    url: str,
    ws: Workspace,
    options: EvalOptions,
    outputs: tuple[Path | None, Path | None, Path | None],
    json_output: bool,
) -> None:
    """``--against URL``: both reports and B (the URL) vs A (embedded), each difference with
    its interval (PPI++ on a partly labelled benchmark with --estimate); ``outputs``: --save
    (both reports and the comparison), --report (the comparison's HTML page) and --run-out
    (refused: two runs). Exit 1 on a failed gate."""
    from ragsonde.cli.progress import RichProgress
    from ragsonde.cli.render import render_comparison, render_side
    from ragsonde.estimate import comparison_predictor, estimate_versus
    from ragsonde.evaluate.against import evaluate_against
    from ragsonde.store.push import describe_target

    save, html, run_out = outputs
    if run_out is not None:
        raise QueryValidationError(
            "--run-out writes one run; with --against, --save writes both reports and their "
            "comparison, --report the comparison's HTML page.",
            field="against",
        )
    comparison_predictor(options.predictor)  # before either side runs
    with RichProgress(
        not json_output and err_console.is_terminal, "queries", passes=("embedded", "URL")
    ) as bars:
        result = evaluate_against(dataset, url, options, ws, progress=bars)
    estimate_versus(result, options)  # each difference's interval; PPI++ when partly labelled
    if save is not None:
        write_text(save, result.model_dump_json(indent=2))
    if html is not None:
        from ragsonde.evaluate.compare_html import write_html_comparison

        write_html_comparison(result, html, f"ragsonde: embedded against {describe_target(url)}")
    if json_output:
        print_json(result)
    else:
        render_side("A (embedded)", result.a)
        render_side(f"B ({describe_target(url)})", result.b)
        console.rule("[bold]B vs A[/]")
        render_comparison(result.comparison)
    failed = [g.gate for r in (result.a, result.b) for g in r.gates if not g.passed]
    if failed:
        err_console.print(f"[bold red]gates failed[/]: {', '.join(failed)}")
        raise typer.Exit(1)
