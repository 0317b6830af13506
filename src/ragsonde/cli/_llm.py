"""What ``judge`` and ``generate --llm`` share: the LLM, budget and price options, how a
run's usage and judgements are shown, and how a judging run that failed ends (exit 1)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from ragsonde.cli._common import console, err_console
from ragsonde.errors import ErrorCode, QueryValidationError

if TYPE_CHECKING:
    from ragsonde.labels import Agreement, JudgeReport, Leakage, Usage
    from ragsonde.labels.chat import Budget, Price

__all__ = [
    "LlmOpt",
    "MaxCallsOpt",
    "MaxCostOpt",
    "PriceOpt",
    "budget_and_price",
    "leakage_line",
    "render_judge",
    "say_what_failed",
    "usage_line",
]

#: ``--llm``: the chat model (any OpenAI-compatible endpoint, OPENAI_BASE_URL).
LlmOpt = Annotated[
    str | None,
    typer.Option(
        "--llm",
        help="openai:MODEL on OPENAI_BASE_URL (OpenAI, Ollama's /v1, vLLM), key OPENAI_API_KEY; "
        "or local:NAME_OR_PATH, a GGUF model run by llama.cpp on loopback (local:gemma3-270m; "
        "pip install 'ragsonde\\[llm-local]').",
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


def usage_line(u: Usage, what: str = "") -> str:
    """The LLM calls, tokens and cost of ``u`` on one line, after ``what`` (which calls)."""
    stop = " · stopped: budget spent" if u.stopped_by_budget else ""
    return (
        f"{what}{u.calls} LLM calls ({u.cached} answers from the cache, {u.failed} failed) · "
        f"{u.prompt_tokens} + {u.completion_tokens} tokens · ${u.cost_usd:.4f}{stop}"
    )


def leakage_line(name: str, lk: Leakage) -> str:
    """One benchmark's lexical leakage, on one line."""
    bm25 = (
        f"BM25 ranks the source first for {lk.bm25_top1:.0%} (MRR {lk.bm25_mrr:.3f})"
        if lk.bm25_top1 is not None and lk.bm25_mrr is not None
        else "no BM25 vectors to rank with"
    )
    return (
        f"leakage ({name}, {lk.queries} queries on {lk.collection}): "
        f"{lk.term_overlap:.0%} of a query's words in its source; {bm25}"
    )


def render_agreement(a: Agreement) -> None:
    """Kappa, the confusion per grade (human rows, LLM columns) and the position bias."""
    from rich.table import Table

    from ragsonde.labels.models import GRADES

    console.print(
        f"agreement with human labels: Cohen's kappa {a.kappa} on {a.pairs} pairs of "
        f"{a.queries} queries (LLM relevant from grade {a.llm_relevant_from}; raw "
        f"agreement {a.raw_agreement})"
    )
    if a.pairs:
        table = Table(title="confusion per grade: human (rows) against LLM (columns)")
        table.add_column("human / LLM")
        for grade in GRADES:
            table.add_column(grade, justify="right")
        for grade, row in a.confusion.items():
            table.add_row(grade, *(str(row[g]) for g in GRADES))
        console.print(table)
    p = a.position
    if p is not None:
        console.print(
            f"position bias: {p.changed} of {p.pairs} pairs graded differently with the passage "
            f"before the query ({p.changed_share if p.changed_share is not None else '-'}; "
            f"{p.higher_passage_first} higher, {p.lower_passage_first} lower; "
            f"{p.relevance_flipped} crossed the relevance threshold)"
        )


def render_judge(r: JudgeReport, *, usage: bool = True) -> None:
    """A judging run in the terminal; ``usage`` False leaves its calls to the caller's line
    (``generate --llm`` counts its questions' and its judging's calls in one)."""
    console.print(
        f"{r.queries} queries · pooled {', '.join(r.modes)} top-{r.depth}: {r.pooled} hits, "
        f"{r.already_labelled} already labelled, {r.judged} judged by {r.model} "
        f"(grades {', '.join(f'{g}: {n}' for g, n in r.grades.items()) or 'none'})"
    )
    if usage:
        console.print(usage_line(r.usage))
    if r.stopped:
        console.print(f"[yellow]stopped early[/]: {r.stopped}; what was judged is saved.")
    if r.agreement is not None:
        render_agreement(r.agreement)
    console.print(f"relevant = labels of {', '.join(r.labels_used)} · wrote {r.out}")
    if r.agreement is not None:  # the Judge page shows it beside the benchmark
        from pathlib import Path

        from ragsonde.labels.agreement import agreement_path

        console.print(f"wrote the agreement report: {agreement_path(Path(r.out))}")


#: Failed queries named on stderr (the rest are counted; --json lists them all).
_SHOWN_ERRORS = 3


def say_what_failed(report: JudgeReport, *, listed: bool) -> None:
    """After a judging run (``judge``, or the judging of ``generate --llm``), on stderr: the
    queries that could not be searched (unless ``listed``: --json has them); and a run that
    calls kept failing stopped exits 1 (what it judged is saved), so a script can tell it from
    a finished one. A run its budget stopped did what it was told: 0."""
    if report.errors and not listed:
        shown = "; ".join(
            f"{escape(qid)}: {escape(why if len(why) <= 200 else why[:200] + '…')}"
            for qid, why in list(report.errors.items())[:_SHOWN_ERRORS]
        )
        more = len(report.errors) - _SHOWN_ERRORS
        err_console.print(
            f"[yellow]warning[/]: {len(report.errors)} queries could not be searched and are "
            f"written unjudged: {shown}"
            + (f"; and {more} more (--json lists them)" if more > 0 else ""),
            soft_wrap=True,
        )
    if report.stopped is not None and not report.usage.stopped_by_budget:
        err_console.print(
            f"[bold red]{ErrorCode.LLM_ERROR.value}[/]: the run stopped early: "
            f"{escape(report.stopped)}. What was judged is saved in {escape(report.out)}; "
            "exit 1. Run it again to judge the rest (answers are cached).",
            soft_wrap=True,
        )
        raise typer.Exit(1)
