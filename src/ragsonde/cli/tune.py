"""``ragsonde tune``: sweep quantization, HNSW and fusion on a copy of a collection, against a
benchmark's labels; print the Pareto front and a recommendation, save or apply it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ragsonde.cli._common import (
    CollectionOpt,
    ConfigOpt,
    EmbedderOpt,
    HomeOpt,
    JsonOpt,
    VectorOpt,
    cli_errors,
    config_file_in_use,
    console,
    err_console,
    print_json,
    settings_from_options,
)
from ragsonde.cli.app import app
from ragsonde.cli.progress import RichProgress
from ragsonde.errors import QueryValidationError
from ragsonde.outputs import check_outputs
from ragsonde.workspace import Workspace

if TYPE_CHECKING:
    from ragsonde.models.store import Store
    from ragsonde.tune import TuneReport

__all__ = ["render_tune", "tune_command"]


def _f(value: float | str | None, digits: int = 4) -> str:
    if value is None:
        return "–"
    return value if isinstance(value, str) else f"{value:.{digits}f}"


def render_tune(report: TuneReport) -> None:
    """Warnings, the Pareto front as a table, cross-validation and the recommendation."""
    for w in report.warnings:
        err_console.print(f"[yellow]warning[/]: {escape(w)}", soft_wrap=True)
    table = Table(
        title=f"Pareto front · {report.collection} · {report.n_queries} queries · "
        f"{len(report.configurations)} configurations · {report.backend}"
    )
    table.add_column("configuration", ratio=1, overflow="fold")
    for col in ("nDCG@10", "R@100", "R vs exact", "HNSW −", "quant −", "p50", "p95", "MB", "×f32"):
        table.add_column(col, justify="right", no_wrap=True)
    table.caption = (
        "R vs exact: recall@10 of the point ids against exact search; HNSW − / quant −: what "
        "the graph / the quantization lose of it; p50, p95: search ms; MB: vector RAM"
    )
    front = sorted((report.config(i) for i in report.pareto), key=lambda c: -c.ndcg)
    chosen = report.recommendation.config
    for c in front:
        table.add_row(
            ("[bold]" if c.id == chosen else "") + escape(c.id),
            _f(c.ndcg),
            _f(c.metrics["recall@100"]),
            _f(c.recall_vs_exact, 3),
            _f(c.hnsw_loss, 3),
            _f(c.quantization_loss, 3),
            f"{c.latency_p50_ms:.2f}",
            f"{c.latency_p95_ms:.2f}",
            f"{c.vector_memory_mb:.2f}",
            f"{c.memory_ratio:.3f}",
        )
    console.print(table)
    for v in report.variants:
        if not v.measurable:
            console.print(f"{escape(v.label)}: {escape(v.note or '')}")
    for scope, cv in report.cross_validation.items():
        se = f" ± {cv.held_out_se:.4f} (standard error)" if cv.held_out_se is not None else ""
        console.print(
            f"cross-validation ({scope}, {cv.folds} folds): held-out nDCG@10 "
            f"[bold]{cv.held_out_ndcg:.4f}[/]{se}; training folds {cv.train_ndcg:.4f}"
        )
        if cv.spread:
            console.print(
                f"  over {cv.spread.splits} other fold splits: held-out {cv.spread.mean:.4f} "
                f"(from {cv.spread.min:.4f} to {cv.spread.max:.4f})"
            )
    rec = report.recommendation
    console.print(
        f"recommended: [bold]{escape(rec.config or 'none')}[/]: {escape(rec.reason)}",
        soft_wrap=True,
    )
    vs = report.versus_current
    if vs is not None:
        colour = "green" if vs.verdict == "adopt" else "yellow"
        console.print(f"against the current configuration: [{colour}][bold]{vs.verdict}[/][/]")


def _apply(store: Store, report: TuneReport, target: str, quiet: bool) -> str:
    """``--apply``: build ``target``, a copy of the tuned collection with the recommended
    quantization, HNSW and BM25 parameters, on the user's own backend."""
    from ragsonde.ingest.pipeline import bm25_reencoder
    from ragsonde.models.index import measurable
    from ragsonde.tune.variants import build_tuned_copy

    chosen = report.config(report.recommendation.config or "")
    spec = report.variant(chosen.variant).spec
    bm25 = bm25_reencoder(spec.bm25) if spec.bm25 else None
    with RichProgress(not quiet and err_console.is_terminal, "points") as bar:
        n = build_tuned_copy(store, report.collection, target, spec, reencode=bm25, progress=bar)
    err_console.print(f"built tuned copy '{target}' ({n} points, {escape(spec.label)})")
    if not measurable(store.backend, "quantization"):
        err_console.print(
            f"[yellow]warning[/]: {store.backend} keeps plain vectors: the copy's quantization "
            "and HNSW settings are not measurable on this backend (a Qdrant server honours them)."
        )
    return target


@app.command("tune")
@cli_errors
def tune_command(
    dataset: Annotated[str, typer.Argument(help="Benchmark: a BEIR folder or a .jsonl/.yaml.")],
    collection: CollectionOpt = None,
    grid: Annotated[
        Path | None,
        typer.Option(
            "--grid",
            help="Grid file (TOML or YAML) naming the axes to sweep; an axis it leaves out "
            "keeps the built-in grid's values \\[default: built-in].",
        ),
    ] = None,
    folds: Annotated[
        int, typer.Option("--folds", min=2, max=100, help="Cross-validation folds.")
    ] = 5,
    max_latency_ms: Annotated[
        float | None, typer.Option("--max-latency-ms", help="Limit on p95 search latency.")
    ] = None,
    min_recall: Annotated[
        float | None, typer.Option("--min-recall", help="Limit on recall@10 vs exact search.")
    ] = None,
    max_memory_mb: Annotated[
        float | None, typer.Option("--max-memory-mb", help="Limit on vector RAM.")
    ] = None,
    mode: Annotated[
        str,
        typer.Option("--mode", help="all (dense, and hybrid with BM25 vectors) | dense."),
    ] = "all",
    split: Annotated[str, typer.Option("--split", help="BEIR qrels split.")] = "test",
    html: Annotated[
        Path | None, typer.Option("--html", help="Write the report with plots here.")
    ] = None,
    save_config: Annotated[
        Path | None,
        typer.Option("--save-config", help="Write the recommended settings (TOML) here."),
    ] = None,
    apply: Annotated[
        str | None,
        typer.Option("--apply", help="Build a tuned copy of the collection under this name."),
    ] = None,
    vector: VectorOpt = None,
    embedder: EmbedderOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Tune quantization, HNSW and fusion on temporary copies of a collection, against your
    labels: Pareto front, cross-validated choice, saved or applied configuration."""
    from ragsonde.ingest.sources import input_files
    from ragsonde.tune import Constraints, TuneOptions, load_grid, tune
    from ragsonde.tune import save_config as save
    from ragsonde.tune.html import write_html

    modes = {"all": ("dense", "hybrid"), "dense": ("dense",)}
    if mode not in modes:
        raise QueryValidationError(f"Unknown --mode {mode!r}: use all or dense.", field="mode")
    settings = settings_from_options(
        config=config_file, collection=collection, embedder=embedder, home=home, vector=vector
    )
    check_outputs(
        {"--html": html, "--save-config": save_config},
        inputs=[*input_files(dataset), grid, config_file_in_use(config_file)],
    )
    options = TuneOptions(
        folds=folds,
        split=split,
        modes=modes[mode],
        constraints=Constraints(
            max_latency_ms=max_latency_ms, min_recall=min_recall, max_memory_mb=max_memory_mb
        ),
        **({"grid": load_grid(grid)} if grid is not None else {}),
    )
    with Workspace(settings) as ws:
        store = ws.store
        if apply and apply in store.list_collections():  # before the sweep, not after it
            raise QueryValidationError(
                f"Collection '{apply}' already exists: --apply never overwrites one.",
                field="apply",
            )
        with RichProgress(not json_output and err_console.is_terminal, "tune") as bar:
            report = tune(dataset, workspace=ws, options=options, progress=bar)
        applied = None
        if apply and report.recommendation.config:
            applied = _apply(store, report, apply, json_output)
        elif apply:
            err_console.print(f"nothing applied: no configuration met the constraints ('{apply}')")
    if save_config is not None:
        save(report, save_config, collection=applied)
        err_console.print(f"saved settings to {save_config} (use it with --config {save_config})")
    if html is not None:
        write_html(report, html)
        err_console.print(f"wrote {html}")
    if json_output:
        print_json(report)
    else:
        render_tune(report)
