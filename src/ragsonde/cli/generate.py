"""``ragsonde generate``: a benchmark from a collection's own chunks (offline, or with an LLM)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragsonde.cli._common import (
    CollectionOpt,
    HomeOpt,
    JsonOpt,
    cli_errors,
    console,
    print_json,
    settings_from_options,
)
from ragsonde.cli.app import app

__all__ = ["generate_command"]


@app.command("generate")
@cli_errors
def generate_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Benchmark file to write (.jsonl).")],
    collection: CollectionOpt = None,
    n: Annotated[int, typer.Option("--n", help="How many queries.")] = 200,
    seed: Annotated[int, typer.Option("--seed", help="Same seed, same benchmark.")] = 0,
    home: HomeOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Generate a benchmark: queries sampled across the collection, each with its source relevant.

    Offline (no LLM): known-item queries of a chunk's most telling terms (tf-idf sampled).
    """
    from ragsonde.labels import generate

    settings = settings_from_options(collection=collection, home=home)
    report = generate(out, n=n, seed=seed, settings=settings)
    if json_output:
        print_json(report)
        return
    console.print(
        f"wrote {report.written} queries to {report.out} ({report.generator}, seed {report.seed}): "
        f"{report.documents_sampled} of {report.documents_in_collection} documents, "
        f"{report.sections_sampled} sections, {report.chunks_in_collection} chunks read"
    )
