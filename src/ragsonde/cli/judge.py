"""``ragsonde judge``: an LLM grades the unjudged hits of each query's pooled top-k, 0–3."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ragsonde.cli._common import (
    CollectionOpt,
    EmbedderOpt,
    HomeOpt,
    JsonOpt,
    cli_errors,
    console,
    print_json,
    settings_from_options,
)
from ragsonde.cli.app import app
from ragsonde.errors import QueryValidationError

if TYPE_CHECKING:
    from ragsonde.labels import JudgeReport, Usage
    from ragsonde.labels.chat import Budget, Price

__all__ = ["LlmOpt", "MaxCallsOpt", "MaxCostOpt", "PriceOpt", "budget_and_price", "judge_command"]

#: ``--llm``: the chat model (any OpenAI-compatible endpoint, OPENAI_BASE_URL).
LlmOpt = Annotated[
    str | None,
    typer.Option(
        "--llm",
        help="openai:MODEL on OPENAI_BASE_URL (OpenAI, Ollama's /v1, vLLM), key OPENAI_API_KEY.",
    ),
]
MaxCallsOpt = Annotated[
    int | None, typer.Option("--max-calls", help="Stop cleanly after this many LLM calls.")
]
MaxCostOpt = Annotated[
    float | None, typer.Option("--max-cost", help="Stop cleanly once this many USD are spent.")
]
PriceOpt = Annotated[
    str | None,
    typer.Option(
        "--price-per-1k",
        help="USD per 1k tokens, 'PROMPT,COMPLETION' or one figure for both "
        "\\[default: the list price of known OpenAI models, else 0].",
    ),
]


def budget_and_price(
    max_calls: int | None, max_cost: float | None, price: str | None
) -> tuple[Budget, Price | None]:
    """The budget and price options, checked."""
    from pydantic import ValidationError

    from ragsonde.labels.chat import Budget, Price

    try:
        budget = Budget(max_calls=max_calls, max_cost=max_cost)
    except ValidationError as e:
        raise QueryValidationError("--max-calls and --max-cost cannot be negative.") from e
    if price is None:
        return budget, None
    try:
        parts = [float(p) for p in price.split(",")]
    except ValueError:
        parts = []
    if len(parts) not in (1, 2) or min(parts) < 0:
        raise QueryValidationError(
            f"--price-per-1k takes 'PROMPT,COMPLETION' or one figure, not '{price}'.",
            field="price_per_1k",
        )
    return budget, Price(parts[0], parts[-1])


def usage_line(u: Usage) -> str:
    stop = " · stopped: budget spent" if u.stopped_by_budget else ""
    return (
        f"{u.calls} LLM calls ({u.cached} answers from the cache, {u.failed} failed) · "
        f"{u.prompt_tokens} + {u.completion_tokens} tokens · ${u.cost_usd:.4f}{stop}"
    )


def render_judge(r: JudgeReport) -> None:
    console.print(
        f"{r.queries} queries · pooled {', '.join(r.modes)} top-{r.depth}: {r.pooled} hits, "
        f"{r.already_labelled} already labelled, {r.judged} judged by {r.model} "
        f"(grades {', '.join(f'{g}: {n}' for g, n in r.grades.items()) or 'none'})"
    )
    console.print(usage_line(r.usage))
    if r.stopped:
        console.print(f"[yellow]stopped early[/]: {r.stopped}; what was judged is saved.")
    if r.agreement is not None:
        a = r.agreement
        console.print(
            f"agreement with human labels: Cohen's kappa {a['kappa']} on {a['pairs']} pairs of "
            f"{a['queries']} queries (LLM relevant from grade {a['llm_relevant_from']}; raw "
            f"agreement {a['raw_agreement']})"
        )
    console.print(f"relevant = labels of {', '.join(r.labels_used)} · wrote {r.out}")


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
    depth: Annotated[int, typer.Option("--depth", help="Top-k of each mode pooled.")] = 10,
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
    use: Annotated[
        str, typer.Option("--use", help="Labels that make `relevant`: human,generator,llm.")
    ] = "human,generator,llm",
    llm_relevant_from: Annotated[
        int, typer.Option("--llm-relevant-from", min=1, max=3, help="LLM grade that is relevant.")
    ] = 2,
    max_calls: MaxCallsOpt = None,
    max_cost: MaxCostOpt = None,
    price_per_1k: PriceOpt = None,
    embedder: EmbedderOpt = None,
    home: HomeOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """LLM-judge the unjudged hits of each query, pooled over dense, sparse and hybrid search.

    Judgements are cached under RAGSONDE_HOME, so a re-run costs nothing.
    """
    from ragsonde.labels.judge import JudgeOptions, judge

    if llm is None:
        raise QueryValidationError("judge needs --llm openai:MODEL.", field="llm")
    from pydantic import TypeAdapter, ValidationError

    from ragsonde.labels import LabelSource

    try:
        sources = TypeAdapter(list[LabelSource]).validate_python(
            [s.strip() for s in use.split(",") if s.strip()]
        )
    except ValidationError as e:
        raise QueryValidationError("--use takes human, generator and/or llm.", field="use") from e
    budget, price = budget_and_price(max_calls, max_cost, price_per_1k)
    settings = settings_from_options(collection=collection, home=home, embedder=embedder)
    target = out or benchmark.with_name(f"{benchmark.stem}.judged.jsonl")
    options = JudgeOptions(
        llm=llm,
        depth=depth,
        modes=mode,
        agreement=agreement,
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
