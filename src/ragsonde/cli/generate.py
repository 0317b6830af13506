"""``ragsonde generate``: a benchmark from a collection's own chunks (offline, or with an LLM)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

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
    print_json,
    settings_from_options,
)
from ragsonde.cli._llm import (
    LlmOpt,
    MaxCallsOpt,
    MaxCostOpt,
    PriceOpt,
    budget_and_price,
    leakage_line,
    render_judge,
    say_what_failed,
    usage_line,
)
from ragsonde.cli.app import app
from ragsonde.outputs import check_outputs

if TYPE_CHECKING:
    from ragsonde.labels import GenerateReport

__all__ = ["generate_command"]


@app.command("generate")
@cli_errors
def generate_command(
    out: Annotated[Path, typer.Option("--out", "-o", help="Benchmark file to write (.jsonl).")],
    collection: CollectionOpt = None,
    n: Annotated[int, typer.Option("--n", min=1, max=100_000, help="How many queries.")] = 200,
    seed: Annotated[
        int, typer.Option("--seed", min=0, max=2**32 - 1, help="Same seed, same benchmark.")
    ] = 0,
    llm: LlmOpt = None,
    method: Annotated[
        str,
        typer.Option(
            "--method",
            help="Offline method: gist (a sentence of the chunk, rarest words dropped first), "
            "sentence (words dropped at random), mixed (popular + discriminative + random "
            "terms), terms (tf-idf terms) or ict (a sentence, removed from its chunk in a copy "
            "of the collection to evaluate on; the default).",
        ),
    ] = "ict",
    no_judge: Annotated[
        bool, typer.Option("--no-judge", help="With --llm: skip pooling and judging.")
    ] = False,
    depth: Annotated[
        int, typer.Option("--depth", min=1, max=1000, help="With --llm: top-k pooled per mode.")
    ] = 10,
    human: Annotated[
        Path | None,
        typer.Option("--human", help="A human benchmark of the collection: its leakage beside."),
    ] = None,
    ict_collection: Annotated[
        str | None,
        typer.Option(
            "--ict-collection",
            help="With --method ict: the copy to write \\[default: COLLECTION-ict-sSEED]. "
            "ragsonde's own copy is reused when its inputs are the same and it is whole, and "
            "rebuilt otherwise; a collection ragsonde did not derive is never overwritten.",
        ),
    ] = None,
    max_calls: MaxCallsOpt = None,
    max_cost: MaxCostOpt = None,
    price_per_1k: PriceOpt = None,
    vector: VectorOpt = None,
    embedder: EmbedderOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Generate a benchmark: queries sampled across the collection, each with its source relevant.

    Offline (no LLM, --method): by default ICT, a sentence of the chunk, evaluated on a copy of
    the collection without it (named in the output).
    With --llm: a question each chunk answers, then pooled and judged (see `ragsonde judge`).
    """
    from ragsonde.labels import GenerateOptions, generate

    budget, price = budget_and_price(max_calls, max_cost, price_per_1k)
    # before any LLM call is paid for; the settings file is an input too (it was overwritten)
    from ragsonde.ingest.sources import input_files  # a BEIR folder: its files

    check_outputs(
        {"--out": out},
        inputs=[*input_files(human), config_file_in_use(config_file)],
        rows=["--out"],
    )
    settings = settings_from_options(
        config=config_file, collection=collection, home=home, embedder=embedder, vector=vector
    )
    report = generate(
        out,
        settings=settings,
        options=GenerateOptions(
            n=n,
            seed=seed,
            llm=llm,
            method=method,
            judge=not no_judge,
            depth=depth,
            budget=budget,
            price=price,
            human=human,
            ict_collection=ict_collection,
        ),
    )
    if json_output:
        print_json(report)
    else:
        _render(report)
    if report.judged is not None:  # judging that calls kept failing stopped: exit 1, as judge
        say_what_failed(report.judged, listed=json_output)


def _render(report: GenerateReport) -> None:
    """What the run did, in the terminal (--json prints the report instead)."""
    if report.judged is not None:
        render_judge(report.judged, usage=False)
    if report.usage is not None:  # every call: the questions', and the judging's when it ran
        what = "questions and judging: " if report.judged else ""
        console.print(usage_line(report.usage, what))
    console.print(
        f"wrote {report.written} queries to {report.out} ({report.generator}, seed {report.seed}): "
        f"{report.documents_sampled} of {report.documents_in_collection} documents, "
        f"{report.sections_sampled} sections, {report.chunks_in_collection} chunks read"
    )
    if report.span_labelled:
        console.print(
            f"{report.span_labelled} of them span-labelled: references [{{doc_id, start, end}}] "
            "to the sentence or excerpt they come from (ragsonde chunking DOCS FILE reads them)"
        )
    for name, lk in (("generated", report.leakage), ("human", report.human_leakage)):
        if lk is not None:
            console.print(leakage_line(name, lk))
    if report.shortfall:
        console.print(f"[yellow]note[/]: {report.shortfall}")
    if report.evaluate_on:
        console.print(
            f"evaluate it on [bold]{report.evaluate_on}[/], ragsonde's copy of "
            f"{report.collection} without the query sentences ({report.evaluate_on_copy}; "
            "`ragsonde collections list` lists it):"
        )
        # one line, never wrapped: it is meant to be copied as it is
        console.print(
            f"  ragsonde eval {shlex.quote(report.out)} --collection "
            f"{shlex.quote(report.evaluate_on)}",
            soft_wrap=True,
            markup=False,
            highlight=False,
        )
    for w in report.warnings:
        console.print(f"[yellow]warning[/]: {w}")
