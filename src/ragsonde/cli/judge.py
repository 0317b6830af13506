"""``ragsonde judge``: an LLM grades the unjudged hits of each query's pooled top-k, 0–3."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

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
    print_json,
    settings_from_options,
)
from ragsonde.cli._llm import (
    LlmOpt,
    MaxCallsOpt,
    MaxCostOpt,
    PriceOpt,
    budget_and_price,
    render_judge,
    say_what_failed,
)
from ragsonde.cli.app import app
from ragsonde.errors import QueryValidationError
from ragsonde.outputs import check_outputs

__all__ = ["judge_command"]


@app.command("judge")
@cli_errors
def judge_command(
    benchmark: Annotated[
        Path, typer.Argument(help="A .jsonl benchmark (or BEIR folder, TREC qrels) to judge.")
    ],
    llm: LlmOpt = None,
    collection: CollectionOpt = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", help="Where to write \\[default: BENCHMARK.judged.jsonl]."),
    ] = None,
    depth: Annotated[
        int, typer.Option("--depth", min=1, max=1000, help="Top-k of each mode pooled.")
    ] = 10,
    mode: Annotated[
        list[str] | None,
        typer.Option("--mode", help="Modes to pool \\[default: all the collection supports]."),
    ] = None,
    agreement: Annotated[
        bool,
        typer.Option(
            "--agreement", help="Also grade human-labelled hits; give Cohen's kappa against them."
        ),
    ] = False,
    position_bias: Annotated[
        bool,
        typer.Option(
            "--position-bias",
            help="With --agreement: grade those pairs again with the passage before the query "
            "and report how often the grade changes (doubles their calls).",
        ),
    ] = False,
    use: Annotated[
        str, typer.Option("--use", help="Labels that make `relevant`: human,generator,llm.")
    ] = "human,generator,llm",
    llm_relevant_from: Annotated[
        int, typer.Option("--llm-relevant-from", min=1, max=3, help="LLM grade that is relevant.")
    ] = 2,
    plan: Annotated[
        int | None,
        typer.Option(
            "--plan",
            min=1,
            help="No LLM: propose the N unlabelled queries whose judgement narrows the "
            "estimate's interval most (stratified by predicted effectiveness and traffic "
            "weight) and write them to --out \\[default: BENCHMARK.plan.json].",
        ),
    ] = None,
    target_width: Annotated[
        float | None,
        typer.Option(
            "--target-width",
            min=0.0,
            help="--plan: also say how many judged queries bring the interval to this width.",
        ),
    ] = None,
    versus: Annotated[
        str | None,
        typer.Option(
            "--versus",
            help="--plan: plan for the difference B - A, B this embedder and A --embedder, as "
            "eval --versus names them (queries whose two top 10s agree need no label).",
        ),
    ] = None,
    collection_b: Annotated[
        str | None,
        typer.Option("--collection-b", help="--plan --versus: B's collection; -c is A's."),
    ] = None,
    pair: Annotated[
        tuple[Path, Path] | None,
        typer.Option(
            "--pair",
            help="--plan: plan for the difference B - A of two saved reports (A.json B.json, "
            "each `eval BENCHMARK --estimate --save`): any two configurations, e.g. two modes.",
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
    """LLM-judge the unjudged hits of each query, pooled over dense, sparse and hybrid search.

    Judgements are cached under RAGSONDE_HOME, so a re-run costs nothing.
    """
    from ragsonde.labels.judge import JudgeOptions, judge

    if plan is not None:
        from ragsonde.cli._plan import run_plan

        settings = settings_from_options(
            config=config_file, collection=collection, home=home, embedder=embedder, vector=vector
        )
        run_plan(
            benchmark,
            plan,
            settings,
            out=out,
            target_width=target_width,
            json_output=json_output,
            versus=versus,
            collection_b=collection_b,
            pair=pair,
            settings_file=config_file_in_use(config_file),
        )
        return
    if versus is not None or collection_b is not None or pair is not None:
        raise QueryValidationError(
            "--versus, --collection-b and --pair go with --plan.", field="versus"
        )
    if llm is None:
        raise QueryValidationError(
            "judge needs --llm openai:MODEL or --llm local:NAME_OR_PATH.", field="llm"
        )
    from pydantic import TypeAdapter, ValidationError

    from ragsonde.labels import LabelSource

    try:
        sources = TypeAdapter(list[LabelSource]).validate_python(
            [s.strip() for s in use.split(",") if s.strip()]
        )
    except ValidationError as e:
        raise QueryValidationError("--use takes human, generator and/or llm.", field="use") from e
    budget, price = budget_and_price(max_calls, max_cost, price_per_1k)
    settings = settings_from_options(
        config=config_file, collection=collection, home=home, embedder=embedder, vector=vector
    )
    target = out or benchmark.with_name(f"{benchmark.stem}.judged.jsonl")
    # before any LLM call is paid for; the settings file is an input too (it was overwritten)
    from ragsonde.ingest.sources import input_files  # a BEIR folder: its files

    inputs = [*input_files(benchmark), config_file_in_use(config_file)]
    outputs = {"--out": target}
    if agreement:  # written after every call was paid for: refused before the first
        from ragsonde.labels.agreement import agreement_path

        outputs["--agreement"] = agreement_path(target)
    check_outputs(outputs, inputs=inputs, rows=["--out"])
    options = JudgeOptions(
        llm=llm,
        depth=depth,
        modes=mode,
        agreement=agreement,
        position_bias=position_bias,
        use=sources,
        llm_relevant_from=llm_relevant_from,
        budget=budget,
        price=price,
    )
    report = judge(benchmark, target, options=options, settings=settings)
    if json_output:
        print_json(report)
    else:
        render_judge(report)
    say_what_failed(report, listed=json_output)
