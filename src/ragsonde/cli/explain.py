"""``ragsonde explain``: one benchmark query's miss ladder, step by step."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragsonde.cli._common import (
    CollectionOpt,
    ConfigOpt,
    EmbedderOpt,
    FieldOpt,
    HomeOpt,
    JsonOpt,
    cli_errors,
    parse_fields,
    print_json,
    settings_from_options,
)
from ragsonde.cli._search import (
    ExactOpt,
    FusionOpt,
    HnswEfOpt,
    ModeOpt,
    RescoreOpt,
    ThresholdOpt,
    search_flags,
)
from ragsonde.cli.app import app

__all__ = ["explain_command"]


@app.command("explain")
@cli_errors
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
        int, typer.Option("--k", help="A miss is a relevant document outside this top k.")
    ] = 10,
    mode: ModeOpt = None,
    fetch: Annotated[
        int | None,
        typer.Option(help="Chunks fetched before collapsing into documents \\[default: k × 3]."),
    ] = None,
    threshold: ThresholdOpt = None,
    fusion: FusionOpt = None,
    hnsw_ef: HnswEfOpt = None,
    exact: ExactOpt = None,
    rescore: RescoreOpt = None,
    split: Annotated[str, typer.Option(help="BEIR qrels split.")] = "test",
    queries: Annotated[
        Path | None, typer.Option(help="Queries TSV (id<TAB>text) for TREC qrels.")
    ] = None,
    field_paths: FieldOpt = None,
    embedder: EmbedderOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Why did a query miss? Each relevant document outside the top k, up the ladder: in the
    collection, text, filter, threshold, quantization, HNSW, crowding, fusion, truncation,
    ranking; blamed on the first stage whose relaxation brings it back."""
    from ragsonde.explain import explain_query

    settings = settings_from_options(
        config=config_file,
        collection=collection,
        home=home,
        embedder=embedder,
        mapping=parse_fields(field_paths),
        search=search_flags(
            mode=mode,
            threshold=threshold,
            fusion=fusion,
            hnsw_ef=hnsw_ef,
            exact=exact,
            rescore=rescore,
        ),
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
