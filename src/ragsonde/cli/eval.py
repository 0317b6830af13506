"""``ragsonde eval``: a benchmark in; metrics, latency, integrity, reports and a CI verdict out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
from rich.table import Table

from ragsonde.cli._common import (
    CollectionOpt,
    EmbedderOpt,
    HomeOpt,
    JsonOpt,
    RichBar,
    cli_errors,
    console,
    err_console,
    print_json,
    settings_from_options,
)
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
from ragsonde.errors import QueryValidationError

if TYPE_CHECKING:
    from ragsonde.evaluate import EvalReport

__all__ = ["eval_command", "render_report"]


class _Bar(RichBar):
    def __init__(self, enabled: bool) -> None:
        super().__init__(
            enabled,
            TextColumn("[bold]queries"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
        )
        self._task = self._p.add_task("queries", total=None)

    def start(self, total: int) -> None:
        self._p.update(self._task, total=total)

    def advance(self, n: int) -> None:
        self._p.update(self._task, advance=n)


def render_report(report: EvalReport) -> None:
    """The report as Rich tables: metrics by k, latency by stage, integrity, gates."""
    data = report.to_json()
    families = list(dict.fromkeys(name.split("@")[0] for name in report.metrics if "@" in name))
    table = Table(
        title=f"{report.n_queries} queries · {report.collection} · {report.embedder} · "
        f"{data['search']['index']} · relevance by {report.relevance_by}"
    )
    table.add_column("metric")
    for k in report.ks:
        table.add_column(f"@{k}", justify="right")
    for fam in families:
        table.add_row(
            fam, *(f"{report.metrics.get(f'{fam}@{k}', float('nan')):.4f}" for k in report.ks)
        )
    console.print(table)
    if "mrr" in report.metrics:
        console.print(f"MRR (uncut): {report.metrics['mrr']:.4f}")
    lat = Table(title="latency per query (ms), one query at a time, embedding included")
    for col in ("stage", "p50", "p95", "p99", "mean"):
        lat.add_column(col, justify="right" if col != "stage" else "left")
    for stage, p in report.latency.items():
        lat.add_row(stage, *(f"{p[x]:.2f}" for x in ("p50", "p95", "p99", "mean")))
    console.print(lat)
    if report.throughput:
        console.print(
            f"batched throughput: {report.throughput['queries_per_s']:.1f} queries/s "
            f"(batches of {int(report.throughput['batch_size'])})"
        )
    integ = report.integrity
    bad = {k: v for k, v in integ["counts"].items() if v}
    console.print(
        f"integrity: {integ['checked_results']} results checked, {integ['problems']} problems"
        + (f" ({', '.join(f'{k}: {v}' for k, v in bad.items())})" if bad else "")
    )
    missing = report.benchmark["relevant_missing_from_collection"]
    if missing:
        console.print(
            f"[yellow]{len(missing)} relevant ids are not in the collection[/] "
            f"(scored as misses): {', '.join(missing[:10])}{' …' if len(missing) > 10 else ''}"
        )
    if report.benchmark["errors"]:
        console.print(f"[red]{len(report.benchmark['errors'])} queries failed[/]")
    if report.threshold_sweep:
        sw = report.threshold_sweep
        best, safe = sw["best_f1"], sw["recall_preserving"]
        console.print(
            f"threshold sweep: best F1 {best['f1']:.3f} at {best['threshold']:g} "
            f"(precision {best['precision']:.3f}, recall {best['recall']:.3f}, "
            f"{best['no_result_share']:.0%} queries with no result); highest threshold keeping "
            f"recall within {sw['max_recall_loss']:.0%}: {safe['threshold']:g} "
            f"→ [bold]{sw['recommended_setting']}[/]"
        )
    if report.index_health:
        ih = report.index_health
        console.print(
            "index health (HNSW vs exact): "
            + ", ".join(f"{k} {v}" for k, v in ih["recall_vs_exact"].items())
            + f"; search p50 {ih['ann_search_ms']['p50']:.2f} ms HNSW vs "
            f"{ih['exact_search_ms']['p50']:.2f} ms exact"
        )
    _render_breakdown(report)
    for g in report.gates:
        mark = "[green]PASS[/]" if g["passed"] else "[red]FAIL[/]"
        console.print(f"{mark} {g['gate']} (value {g['value']})")


def _render_breakdown(report: EvalReport) -> None:
    """Metrics per filter and per ``--by`` group, under an ``all`` row to compare with."""
    from ragsonde.evaluate.breakdown import headline_metrics

    bd = report.breakdown or {}
    names = headline_metrics(report.metrics, report.gates)
    parts = [("by filter", bd.get("filters"))]
    if bd.get("by"):
        depth = f":{bd['by']['depth']}" if bd["by"]["depth"] else ""
        parts.append(
            (f"by {bd['by']['field']}{depth} (of each query's most relevant item)", bd["by"])
        )
    for title, part in parts:
        if not part:
            continue
        table = Table(
            title=f"metrics {title}",
            caption="n: queries · empty: queries with no result · "
            "violations: results that break the query's filters",
        )
        table.add_column("group", overflow="fold")
        for col in ("n", *names, "empty", "violations"):
            table.add_column(col, justify="right", no_wrap=True)
        violated = report.integrity["counts"].get("filter_violated", 0)
        table.add_row(
            "[bold]all[/]",
            str(report.n_queries),
            *(f"{report.metrics[n]:.4f}" for n in names),
            "",
            str(violated),
        )
        for label, g in part["groups"].items():
            bad = g["filter_violations"]
            table.add_row(
                escape(label),
                str(g["queries"]),
                *(f"{g['metrics'].get(n, 0.0):.4f}" for n in names),
                str(g["empty_results"]),
                f"[red]{bad}[/]" if bad else "0",
            )
        console.print(table)


def _ks(text: str) -> list[int]:
    try:
        ks = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise QueryValidationError(
            f"--k {text!r}: give cutoffs like 1,3,5,10,100.", field="k"
        ) from None
    if not ks or ks[0] < 1:
        raise QueryValidationError("--k cutoffs must be positive integers.", field="k")
    return ks


@app.command("eval")
@cli_errors
def eval_command(
    dataset: Annotated[
        str,
        typer.Argument(
            help="A BEIR folder, TREC qrels (with --queries), or a .jsonl/.yaml benchmark."
        ),
    ],
    collection: CollectionOpt = None,
    k: Annotated[str, typer.Option("--k", help="Cutoffs, comma-separated.")] = "1,3,5,10,100",
    relevance_by: Annotated[
        str, typer.Option(help="What the relevant ids name: doc | url | chunk.")
    ] = "doc",
    ingest: Annotated[
        bool, typer.Option("--ingest", help="Ingest the dataset's corpus first when missing.")
    ] = False,
    gate: Annotated[
        list[str] | None,
        typer.Option("--gate", help="e.g. 'ndcg@10>=0.60', 'latency.total_ms.p95<=50'."),
    ] = None,
    report: Annotated[Path | None, typer.Option(help="Write a self-contained HTML report.")] = None,
    run_out: Annotated[Path | None, typer.Option(help="Write a TREC run file.")] = None,
    save: Annotated[Path | None, typer.Option(help="Write the whole report as JSON.")] = None,
    split: Annotated[str, typer.Option(help="BEIR qrels split.")] = "test",
    queries: Annotated[
        Path | None, typer.Option(help="Queries TSV (id<TAB>text) for TREC qrels.")
    ] = None,
    exact: Annotated[
        bool, typer.Option("--exact", help="Exact (brute-force) search instead of HNSW.")
    ] = False,
    mode: Annotated[str, typer.Option(help="dense | sparse | hybrid")] = "dense",
    sweep_thresholds: Annotated[
        bool,
        typer.Option("--sweep-thresholds", help="Calibrate score_threshold: P/R/F1 over 0–1."),
    ] = False,
    max_recall_loss: Annotated[
        float, typer.Option(help="Recall the recommended threshold may lose (share).")
    ] = 0.05,
    ann_vs_exact: Annotated[
        bool,
        typer.Option("--ann-vs-exact", help="Index health: HNSW recall@k against exact search."),
    ] = False,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            help="Also give metrics per value of this payload field of each query's most "
            "relevant document: category, section, url:1 (url up to its first path segment).",
        ),
    ] = None,
    no_throughput: Annotated[
        bool, typer.Option("--no-throughput", help="Skip the batched-throughput pass.")
    ] = False,
    corpus: CorpusOpt = None,
    embedder: EmbedderOpt = None,
    versus: VersusOpt = None,
    collection_b: CollectionBOpt = None,
    metric: MetricOpt = None,
    gate_no_regression: GateNoRegressionOpt = False,
    alpha: AlphaOpt = 0.05,
    home: HomeOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Evaluate retrieval: IR metrics, latency, integrity, gates (exit 1 on a failed gate)."""
    from ragsonde.evaluate import EvalOptions, evaluate, parse_gate

    settings = settings_from_options(collection=collection, home=home, embedder=embedder)
    options = EvalOptions(
        ks=_ks(k),
        relevance_by=relevance_by,
        ingest=ingest,
        gates=[parse_gate(g) for g in gate or []],
        exact=exact,
        mode=mode,
        throughput=not no_throughput,
        split=split,
        queries_file=queries,
        sweep_thresholds=sweep_thresholds,
        max_recall_loss=max_recall_loss,
        ann_vs_exact=ann_vs_exact,
        by=by,
        corpus=corpus,
    )
    if versus is not None or collection_b or metric or gate_no_regression or alpha != 0.05:
        run_versus(
            dataset,
            settings=settings,
            options=options,
            versus=versus,
            collection_b=collection_b,
            metrics=metric,
            gate_no_regression=gate_no_regression,
            alpha=alpha,
            save=save,
            single_report_outputs={"--report": report, "--run-out": run_out},
            json_output=json_output,
        )
        return
    with _Bar(enabled=not json_output and err_console.is_terminal) as bar:
        result = evaluate(dataset, settings=settings, options=options, progress=bar)
    doc = result.to_json()
    if save is not None:
        save.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    if run_out is not None:
        result.write_run(run_out)
    if report is not None:
        from ragsonde.evaluate.html import write_html_report

        write_html_report(doc, report)
    if json_output:
        print_json(doc)
    else:
        render_report(result)
        for path, what in ((save, "report JSON"), (run_out, "TREC run"), (report, "HTML report")):
            if path is not None:
                console.print(f"wrote {what}: {path}")
    if not result.passed:
        failed = [g["gate"] for g in result.gates if not g["passed"]]
        err_console.print(f"[bold red]gates failed[/]: {', '.join(failed)}")
        raise typer.Exit(1)
