"""``ragsonde push``: copy an embedded collection to a Qdrant server (the scale-out path)."""

from __future__ import annotations

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
from ragsonde.cli._index import HnswEfConstructOpt, HnswMOpt, QuantizationOpt, index_flags
from ragsonde.cli.app import app
from ragsonde.cli.progress import RichProgress
from ragsonde.errors import QueryValidationError, RagsondeError

__all__ = ["push"]


@app.command()
@cli_errors
def push(
    collection: CollectionOpt = None,
    to: Annotated[
        str | None,
        typer.Option(
            "--to",
            help="Target: http(s)://host:port (a Qdrant server), a folder (path:/dir, "
            "qdrant-client's on-disk local mode) or :memory: \\[default: QDRANT_URL]",
        ),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(
            "--api-key",
            help="The target's API key \\[default: QDRANT_API_KEY]. Never printed.",
            show_default=False,
        ),
    ] = None,
    target_collection: Annotated[
        str | None,
        typer.Option(help="Name of the collection on the target \\[default: --collection]."),
    ] = None,
    batch_size: Annotated[
        int, typer.Option(min=1, max=10_000, help="Points read and written at a time.")
    ] = 256,
    timeout: Annotated[
        float, typer.Option(min=1, help="Seconds to wait for the target on each request.")
    ] = 60.0,
    layout: Annotated[
        str,
        typer.Option(
            help="Payload layout on the target: ragsonde (as stored), langchain or llamaindex "
            "(that framework's QdrantVectorStore reads the copy natively).",
        ),
    ] = "ragsonde",
    quantization: QuantizationOpt = None,
    hnsw_m: HnswMOpt = None,
    hnsw_ef_construct: HnswEfConstructOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Push an embedded collection (vectors, BM25 vectors, payloads) to a Qdrant server or a
    qdrant-client folder (--to): in batches, and resumable: run it again after a failure and
    what was copied is skipped. Quantization and HNSW options apply when the target collection
    is created."""
    from ragsonde.store.push import check_target_folder, describe_target, open_target
    from ragsonde.store.push import push as run_push
    from ragsonde.workspace import Workspace

    settings = settings_from_options(
        config=config_file,
        collection=collection,
        home=home,
        index=index_flags(
            quantization=quantization, hnsw_m=hnsw_m, hnsw_ef_construct=hnsw_ef_construct
        ),
    )
    url = to or settings.qdrant_url
    if not url:
        raise QueryValidationError(
            "Where to? Give --to http(s)://host:port (or set QDRANT_URL).", field="to"
        )
    key = api_key or (
        settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
    )
    label = describe_target(url, key)
    check_target_folder(url, settings.home)
    # The source is always the embedded store, whatever QDRANT_URL says (it names the target).
    with Workspace(settings.model_copy(update={"qdrant_url": None})) as source:
        target = open_target(url, api_key=key, timeout_s=timeout)
        try:
            with RichProgress(
                not json_output and err_console.is_terminal,
                "points",
                tallies=("copied", "skipped"),
                tallies_advance=True,
            ) as bar:
                report = run_push(
                    source.store,
                    settings.collection,
                    target,
                    target_collection=target_collection,
                    target_label=label,
                    batch_size=batch_size,
                    progress=bar,
                    layout=layout,
                    index=settings.index_config,
                )
        except RagsondeError:
            if bar.counts["copied"] and not json_output:
                err_console.print(
                    f"{bar.counts['copied']} points were copied before the failure. Run the same "
                    "command again to resume: points already on the target are skipped."
                )
            raise
        finally:
            target.close()
    if json_output:
        print_json(report)
        return
    for warning in report.warnings:
        err_console.print(f"[yellow]warning[/]: {escape(warning)}", soft_wrap=True)
    console.print(
        f"[bold green]Pushed[/] '{report.collection}' → '{report.target_collection}' at "
        f"{report.target}: {report.points} points, {report.copied} copied, "
        f"{report.skipped} already there ({report.seconds:.1f} s)."
    )
