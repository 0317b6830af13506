"""``ragsonde ingest``: documents → chunks → embeddings → a Qdrant collection."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from ragsonde.cli._common import (
    CollectionOpt,
    ConfigOpt,
    HomeOpt,
    JsonOpt,
    cli_errors,
    console,
    err_console,
    print_json,
    settings_from_options,
)
from ragsonde.cli._index import (
    Bm25BOpt,
    Bm25K1Opt,
    Bm25LanguageOpt,
    Bm25TitleWeightOpt,
    HnswEfConstructOpt,
    HnswMOpt,
    QuantizationOpt,
    index_flags,
)
from ragsonde.cli.app import app
from ragsonde.cli.progress import RichProgress
from ragsonde.models.text import counted

__all__ = ["ingest"]

#: Failures listed on the terminal; a corpus of another shape failed on every line, thousands.
FAILURES_SHOWN = 20


@app.command()
@cli_errors
def ingest(
    source: Annotated[
        str,
        typer.Argument(help="A folder, a BEIR corpus, a .jsonl file, a sitemap URL or a page URL."),
    ],
    collection: CollectionOpt = None,
    fmt: Annotated[
        str | None,
        typer.Option("--format", help="folder | web | beir | jsonl \\[default: detected]"),
    ] = None,
    chunk_size: Annotated[
        int | None,
        typer.Option(help="Chunk size in the model's tokens \\[default: the model's window]."),
    ] = None,
    chunk_overlap: Annotated[
        int | None, typer.Option(help="Overlap between chunks \\[default: 10 % of the size].")
    ] = None,
    chunking: Annotated[
        Path | None,
        typer.Option(
            "--chunking",
            help="Chunking file (TOML) `ragsonde chunking --save-config` wrote: splitter, "
            "size, overlap (--chunk-size/--chunk-overlap still win).",
        ),
    ] = None,
    prune: Annotated[
        bool, typer.Option("--prune", help="Delete documents that are no longer in the source.")
    ] = False,
    sparse: Annotated[
        bool, typer.Option("--sparse", help="Also write BM25 vectors (modes sparse, hybrid).")
    ] = False,
    base_url: Annotated[
        str | None, typer.Option(help="URL prefix for files without a url in their front matter.")
    ] = None,
    concurrency: Annotated[int, typer.Option(help="Pages fetched at a time (web).")] = 8,
    quantization: QuantizationOpt = None,
    hnsw_m: HnswMOpt = None,
    hnsw_ef_construct: HnswEfConstructOpt = None,
    bm25_k1: Bm25K1Opt = None,
    bm25_b: Bm25BOpt = None,
    bm25_title_weight: Bm25TitleWeightOpt = None,
    bm25_language: Bm25LanguageOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Ingest documents into a collection: idempotent, skips what is unchanged, shows progress.

    Exits 1 when pages of a docs site could not be fetched (they are listed), or when nothing
    was read (every document failed, a folder holds no file ingest reads, or a .jsonl or corpus
    holds no document); files skipped in a folder (not UTF-8, symlinks leading outside it) are
    listed and the exit is 0.
    Quantization and HNSW options apply when the collection is created (a warning names what an
    existing one has instead).
    """
    from ragsonde.ingest import IngestOptions, SourceOptions, detect_format
    from ragsonde.ingest import ingest as run_ingest

    settings = settings_from_options(
        config=config_file,
        collection=collection,
        home=home,
        index=index_flags(
            quantization=quantization,
            hnsw_m=hnsw_m,
            hnsw_ef_construct=hnsw_ef_construct,
            bm25_k1=bm25_k1,
            bm25_b=bm25_b,
            bm25_title_weight=bm25_title_weight,
            bm25_language=bm25_language,
        ),
    )
    splitter = "recursive"
    if chunking is not None:
        from ragsonde.chunking.saved import load_chunking

        splitter, saved_size, saved_overlap = load_chunking(chunking)
        chunk_size = chunk_size if chunk_size is not None else saved_size
        chunk_overlap = chunk_overlap if chunk_overlap is not None else saved_overlap
    options = IngestOptions(
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        prune=prune,
        sparse=sparse,
        splitter=splitter,
        source=SourceOptions(base_url=base_url, concurrency=concurrency),
    )
    with RichProgress(
        not json_output and err_console.is_terminal, "documents", tallies=("chunks",), rate="chunks"
    ) as progress:
        report = run_ingest(
            source,
            fmt=fmt,
            settings=settings,
            options=options,
            progress=progress,
        )
    # A page that could not be fetched is content the user asked for and did not get; a file
    # skipped in a folder is one the folder should not have held.
    kind = fmt or detect_format(source)
    failed_pages = bool(report.failed) and kind == "web"
    # Nothing read and something failed: the run ingested none of what it was given.
    failed_all = bool(report.failed) and report.documents == 0 and report.skipped == 0
    # A folder with no file of a kind ingest reads (PDFs only, the wrong folder), or an empty
    # .jsonl or corpus: it exited 0 with "Ingested 0 documents" and an empty collection.
    read_none = (
        kind != "web"
        and report.documents == report.skipped == report.deleted == 0
        and not report.failed
    )
    for warning in report.warnings:
        err_console.print(f"[yellow]warning[/]: {escape(warning)}", soft_wrap=True)
    if json_output:
        print_json(report)
        if failed_pages or failed_all or read_none:
            raise typer.Exit(1)
        return
    console.print(
        f"[bold green]Ingested[/] {counted(report.documents, 'document')} → "
        f"{counted(report.chunks, 'chunk')} in "
        f"'{report.collection}': {report.embedded} embedded, {report.rewritten} payload updated, "
        f"{report.skipped} unchanged, "
        f"{report.deleted} deleted, {len(report.failed)} failed ({report.seconds:.1f} s)."
    )
    for failure in report.failed[:FAILURES_SHOWN]:
        err_console.print(f"  [yellow]failed[/] {escape(failure.source)}: {escape(failure.reason)}")
    if len(report.failed) > FAILURES_SHOWN:
        err_console.print(
            f"  … and {len(report.failed) - FAILURES_SHOWN} more failures (`--json` lists each)"
        )
    if failed_pages:
        err_console.print(
            f"[bold red]{counted(len(report.failed), 'page')} could not be fetched[/] (listed "
            "above); "
            "run the ingest again to retry them."
        )
        raise typer.Exit(1)
    if failed_all:
        err_console.print(
            f"[bold red]Nothing was ingested[/]: all {len(report.failed)} documents failed "
            "(listed above)."
        )
        raise typer.Exit(1)
    if read_none:
        from ragsonde.ingest.parse import PARSER_FOR_SUFFIX

        what = (
            f"holds no file ingest reads ({', '.join(PARSER_FOR_SUFFIX)}); name the folder of "
            "your documents"
            if kind == "folder"
            else "holds no documents (it is empty); name a file with one document a line"
            if kind == "jsonl"
            else "holds no documents (its corpus is empty)"
        )
        err_console.print(
            f"[bold red]Nothing was ingested[/]: {escape(source)} {what}.", soft_wrap=True
        )
        raise typer.Exit(1)
