"""``ragsonde chunking DOCS [BENCH]``: which chunking? Sweep splitters, sizes and overlaps into
temporary collections, searched exactly, scored span by span; table, JSON, HTML, saved choice.
Without BENCH, the questions are generated from DOCS (:mod:`ragsonde.chunking.questions`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ragsonde.cli._common import (
    ConfigOpt,
    EmbedderOpt,
    HomeOpt,
    JsonOpt,
    cli_errors,
    config_file_in_use,
    console,
    err_console,
    print_json,
    settings_from_options,
)
from ragsonde.cli.app import app
from ragsonde.cli.progress import RichProgress
from ragsonde.outputs import check_outputs

if TYPE_CHECKING:
    from ragsonde.chunking import ChunkingReport

__all__ = ["chunking_command", "render_chunking"]


def render_chunking(report: ChunkingReport) -> None:
    """Warnings, one row per configuration, the recommendation."""
    for w in report.warnings:
        err_console.print(f"[yellow]warning[/]: {escape(w)}", soft_wrap=True)
    k, b = report.k, report.token_budget
    made = "generated " if report.question_source == "generated" else ""
    table = Table(
        title=f"{len(report.questions)} {made}questions · {report.embedder} · exact search · "
        f"k={k} · budget {b} word pieces"
    )
    table.add_column("config", no_wrap=True)
    names = [
        (f"span_recall@{k}", f"R@{k}"),
        (f"span_iou@{k}", f"IoU@{k}"),
        ("span_precision_omega", "PΩ"),
        (f"span_recall@{b}t", "R@B"),
        (f"span_iou@{b}t", "IoU@B"),
        ("ndcg@10", "nDCG"),
    ]
    for _, head in names:
        table.add_column(head, justify="right", no_wrap=True)
    for head in ("points", "MB", "s", "p95", "vs best"):
        table.add_column(head, justify="right", no_wrap=True)
    notes = []
    for r in report.configurations:
        versus = r.versus_best
        verdict = {"better": "better", "worse": "worse"}.get(versus.verdict, "≈") if versus else ""
        test = "best" if versus is None else f"{versus.delta:+.3f} {verdict}"
        style = "[bold]" if r.label == report.recommended else ""
        label = r.label + (f" (+{len(r.same_as)} same)" if r.same_as else "")
        cells = [f"{r.metrics[n]:.3f}" if n in r.metrics else "–" for n, _ in names]
        if r.note is not None:
            notes.append(f"* {r.label} {r.note}")
            cells[3] += "*"  # beside the equal-budget figure
        table.add_row(
            style + escape(label),
            *cells,
            str(r.costs.points),
            f"{r.costs.vector_memory_mb:.2f}",
            f"{r.costs.ingest_s:.0f}",
            f"{r.costs.search_p95_ms:.1f}",
            test,
        )
    table.caption = (
        f"R, IoU, PΩ: span recall, IoU, precision_Ω (Chroma's definitions); @B: chunks taken "
        f"while they fit in {b} word pieces; nDCG@10 by document; MB: vector memory; s: ingest; "
        f"p95: exact search ms; vs best: paired tests on {report.primary} (≈: no significant "
        "difference); chunk lengths in --json/--html"
    )
    console.print(table)
    for note in notes:
        console.print(escape(note), soft_wrap=True)
    console.print(
        f"recommended: [bold]{escape(report.recommendation)}[/]",
        soft_wrap=True,
    )
    if report.resumed:
        err_console.print(f"read back from an earlier run: {', '.join(report.resumed)}")


@app.command("chunking")
@cli_errors
def chunking_command(
    docs: Annotated[str, typer.Argument(help="Documents: anything `ragsonde ingest` reads.")],
    bench: Annotated[
        str | None,
        typer.Argument(
            help="Span-labelled questions: Chroma's questions CSV, or a .jsonl/.yaml whose rows "
            "have references: [{doc_id, start, end}]. Leave it out to generate --questions "
            "questions from DOCS (offline, seeded; the report says they are generated)."
        ),
    ] = None,
    configs: Annotated[
        list[str] | None,
        typer.Option(
            "--config-grid",
            "-g",
            help="A configuration, 'SPLITTER SIZE/OVERLAP' (fixed, recursive, recursive-chars, "
            "markdown, sentence) or 'ragsonde'; repeat it \\[default: the built-in grid].",
        ),
    ] = None,
    k: Annotated[
        int, typer.Option("--k", min=1, max=1000, help="Chunks retrieved per question.")
    ] = 5,
    budget: Annotated[
        int,
        typer.Option(
            "--budget", min=16, max=1_000_000, help="Retrieved word pieces for the @budget metrics."
        ),
    ] = 1000,
    metric: Annotated[
        str | None,
        typer.Option("--metric", help="Metric that ranks \\[default: span_recall@<budget>t]."),
    ] = None,
    questions: Annotated[
        int,
        typer.Option(
            "--questions", min=1, max=100_000, help="Without BENCH: questions to generate."
        ),
    ] = 100,
    seed: Annotated[
        int,
        typer.Option("--seed", min=0, max=2**32 - 1, help="Without BENCH: the questions' seed."),
    ] = 0,
    across_sections: Annotated[
        bool,
        typer.Option(
            "--across-sections",
            help="Split each document as a whole, across its headings. By default each "
            "section is split apart, as ingest does, so a window larger than every section "
            "changes nothing (such configurations are reported as one row).",
        ),
    ] = False,
    fresh: Annotated[
        bool,
        typer.Option("--fresh", help="Compute every configuration again (embeddings stay cached)."),
    ] = False,
    html: Annotated[Path | None, typer.Option("--html", help="Write the HTML report here.")] = None,
    save: Annotated[Path | None, typer.Option("--save", help="Write the JSON report here.")] = None,
    save_config: Annotated[
        Path | None,
        typer.Option(
            "--save-config", help="Write the recommended chunking (TOML) for `ingest --chunking`."
        ),
    ] = None,
    embedder: EmbedderOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Which chunking? Sweep splitters, sizes and overlaps on your documents into temporary
    collections (yours are untouched), search exactly, and score span by span."""
    from ragsonde.chunking import DEFAULT_GRID, SweepOptions, parse_configs, sweep_chunking
    from ragsonde.chunking.html import write_html
    from ragsonde.chunking.saved import save_chunking
    from ragsonde.ingest.sources import input_files
    from ragsonde.workspace import Workspace

    settings = settings_from_options(config=config_file, embedder=embedder, home=home)
    check_outputs(
        {"--html": html, "--save": save, "--save-config": save_config},
        inputs=[*input_files(docs), bench, config_file_in_use(config_file)],
    )
    grid = tuple(parse_configs(configs)) if configs else DEFAULT_GRID
    options = SweepOptions(
        configs=grid,
        k=k,
        token_budget=budget,
        primary=metric,
        resume=not fresh,
        questions=questions,
        seed=seed,
        within_sections=not across_sections,
    )
    with (
        Workspace(settings) as ws,
        RichProgress(
            not json_output and err_console.is_terminal, "configurations", tallies=("chunks",)
        ) as bar,
    ):
        report = sweep_chunking(docs, bench, options=options, workspace=ws, progress=bar)
    if save is not None:
        from ragsonde.outputs import write_text

        write_text(save, report.model_dump_json(indent=1))
        err_console.print(f"wrote {save}")
    if html is not None:
        write_html(report, html)
        err_console.print(f"wrote {html}")
    if save_config is not None:
        chosen = save_chunking(report, save_config)
        err_console.print(
            f"saved {chosen.label} to {save_config} (ingest with --chunking {save_config})"
        )
    if json_output:
        print_json(report)
    else:
        render_chunking(report)
