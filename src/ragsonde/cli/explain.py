"""``ragsonde explain``: one benchmark query's miss ladder, step by step."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

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
    parse_fields,
    print_json,
    settings_from_options,
)
from ragsonde.cli._search import search_options
from ragsonde.cli.app import app

__all__ = ["explain_command"]


@app.command("explain")
@cli_errors
@search_options("mode", "threshold", "fusion", "hnsw_ef", "exact", "rescore")
def explain_command(
    dataset: Annotated[
        str,
        typer.Argument(
            help="A BEIR folder, TREC qrels (with --queries), or a .jsonl/.yaml benchmark."
        ),
    ],
    query_id: Annotated[str, typer.Option("--query-id", "-q", help="The query to explain.")],
    collection: CollectionOpt = None,
    k: Annotated[
        int,
        typer.Option(
            "--k", min=1, max=1000, help="A miss is a relevant document outside this top k."
        ),
    ] = 10,
    fetch: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=10_000,
            help="Chunks fetched before collapsing into documents \\[default: k × 3].",
        ),
    ] = None,
    split: Annotated[str, typer.Option(help="BEIR qrels split.")] = "test",
    queries: Annotated[
        Path | None,
        typer.Option(help="Queries for TREC qrels: TSV (id<TAB>text) or BEIR queries.jsonl."),
    ] = None,
    field_paths: FieldOpt = None,
    vector: VectorOpt = None,
    embedder: EmbedderOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
    search: dict[str, Any] | None = None,
) -> None:
    """Why did a query miss? Each relevant document outside the top k, up the ladder: in the
    collection, text, filter, threshold, quantization, HNSW, crowding, fusion, truncation,
    chunking (answer spans), ranking; blamed on the first stage that lost it."""
    from ragsonde.explain import explain_query

    settings = settings_from_options(
        config=config_file,
        collection=collection,
        home=home,
        embedder=embedder,
        vector=vector,
        mapping=parse_fields(field_paths),
        search=search,
    )
    section = explain_query(
        dataset,
        query_id,
        k=k,
        split=split,
        queries=queries,
        fetch=fetch,
        settings=settings,
    )
    if json_output:
        print_json(section)
        return
    from ragsonde.cli._misses import render_ladder

    for qid, q in section.per_query.items():
        render_ladder(qid, q, section.k)
    for stage, why in section.not_measurable.items():
        typer.echo(f"not measurable here: {stage}: {why}")
