"""``judge``: an LLM grades the unjudged hits of each query's pooled top-k, 0–3.

Each query is searched in every mode the collection supports (:mod:`.pool`), and each pooled
chunk whose document has no label yet is graded with the UMBRELA-style prompt
(:mod:`.prompts`) through the cache (:mod:`.cache`), so a re-run makes no call. A document's LLM
grade is the best grade of its chunks. LLM labels are added to the entry's ``labels`` with their
provenance (``source="llm"``, the model, when); the written ``relevant`` holds the positive labels
of the sources in ``use`` (LLM grades from ``llm_relevant_from`` up), and the report says which.
A document a person labelled keeps that grade: with ``agreement`` the LLM grades it too, to
measure, never to replace it.

A run stops cleanly, saving what was done, when its budget is spent or when calls keep failing.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ragsonde.config import Settings
from ragsonde.embedders import Embedder
from ragsonde.evaluate.options import options_error
from ragsonde.labels.agreement import agreement as kappa
from ragsonde.labels.agreement import agreement_path, position_bias
from ragsonde.labels.asker import CachedAsker
from ragsonde.labels.benchfile import read_entries, write_entries
from ragsonde.labels.cache import LlmCache
from ragsonde.labels.chat import Budget, ChatClient, Price
from ragsonde.labels.models import (
    Agreement,
    BenchmarkEntry,
    JudgeReport,
    Label,
    LabelSource,
    PositionBias,
)
from ragsonde.labels.pool import PooledHit, modes_for, pool
from ragsonde.labels.prompts import judge_messages, judge_version, parse_grade
from ragsonde.models import SearchMode
from ragsonde.models.query import resolve_collection
from ragsonde.models.store import Store
from ragsonde.models.validation import options_of
from ragsonde.retriever import Retriever
from ragsonde.workspace import Workspace, using

__all__ = ["JudgeOptions", "judge", "judge_entries"]


class JudgeOptions(BaseModel):
    """Options of :func:`judge`: frozen and validated like every workflow's (``EvalOptions``,
    ``TuneOptions``); a bad value is a VALIDATION_ERROR naming the field."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    llm: str = Field(description="openai:MODEL, or local:NAME_OR_PATH (llama.cpp on loopback).")
    depth: int = Field(default=10, ge=1, le=100, description="Top-k of each mode pooled.")
    modes: tuple[SearchMode, ...] | None = Field(
        default=None, description="Modes to pool; default every mode the collection supports."
    )
    agreement: bool = Field(
        default=False,
        description="Also grade hits that carry a human label, and report Cohen's kappa.",
    )
    position_bias: bool = Field(
        default=False,
        description="With agreement: grade each pair of the queries with human labels again "
        "with the passage before the query, and report how often the grade changes.",
    )
    use: tuple[LabelSource, ...] = Field(
        default=("human", "generator", "llm"), description="Which labels make `relevant`."
    )
    llm_relevant_from: int = Field(
        default=2, ge=1, le=3, description="The LLM grade from which a hit counts as relevant."
    )
    budget: Budget = Field(default_factory=Budget)
    price: Price | None = None
    timeout_s: float | None = Field(default=None, gt=0)

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise options_error(e) from e

    @model_validator(mode="after")
    def _bias_needs_agreement(self) -> JudgeOptions:
        if self.position_bias and not self.agreement:
            raise ValueError("position_bias grades the pairs agreement compares: set agreement")
        return self


def _grade(
    asker: CachedAsker, query: str, hit: PooledHit, model: str, *, passage_first: bool = False
) -> Label | None:
    """The LLM's grade of ``hit`` for ``query`` (cached); None when not to be had.
    ``passage_first``: shown in the other order (position bias), cached apart."""
    style = asker.client.style
    key = LlmCache.key(judge_version(style, passage_first=passage_first), query, hit.content_hash)
    got = asker.ask(
        "judge",
        key,
        judge_messages(query, hit.text, style, passage_first=passage_first),
        max_tokens=32 if style == "instruct" else 3,
        accept=lambda a: parse_grade(a, style) is not None,
    )
    grade = None if got is None else parse_grade(got[0], style)
    if got is None or grade is None:
        return None
    return Label(
        id=hit.doc_id, grade=grade, source="llm", judge=model, at=got[1], chunk_id=hit.chunk_id
    )


#: Whose label decides a document's grade when several sources labelled it: a person's over
#: the generator's (the query's source), either over an LLM's.
_PRECEDENCE: tuple[LabelSource, ...] = ("human", "generator", "llm")


def _relevant(entry: BenchmarkEntry, use: Sequence[LabelSource], llm_from: int) -> dict[str, int]:
    """``relevant`` from the labels of ``use``: each document's grade is that of the first
    source in :data:`_PRECEDENCE` that labelled it (its best label there), so an LLM grade
    never overrides a human one, 0 included (``--agreement`` grades those to compare only)."""
    out: dict[str, int] = {}
    decided: set[str] = set()
    for source in _PRECEDENCE:
        if source not in use:
            continue
        for item, grade in entry.labelled([source]).items():
            if item in decided:
                continue
            if grade >= (llm_from if source == "llm" else 1):
                out[item] = grade
        decided |= entry.labelled([source]).keys()
    return out


def judge_entries(
    entries: list[BenchmarkEntry],
    *,
    retriever: Retriever,
    collection: str,
    client: ChatClient,
    cache: LlmCache,
    options: JudgeOptions,
    name: str,
    out: Path,
) -> tuple[list[BenchmarkEntry], JudgeReport]:
    """Pool, grade, and return the entries with their new labels, and the report."""
    started = time.perf_counter()
    modes = modes_for(retriever, collection, options.modes)
    pools, errors, searches = pool(retriever, collection, entries, modes, options.depth)
    run = CachedAsker(client, cache)
    grades: Counter[int] = Counter()
    pooled = already = judged = 0
    result: list[BenchmarkEntry] = []
    both: list[tuple[str, PooledHit, int]] = []  # graded pairs of queries with human labels
    for e in entries:
        labels = list(e.labels)
        human = bool(e.labelled(["human"]))
        for hit in pools.get(e.query_id, []):
            pooled += 1
            mine = any(
                lab.source == "llm" and lab.judge == client.name and lab.chunk_id == hit.chunk_id
                for lab in labels
            )
            # Labelled before this run: every pooled chunk of an unlabelled document is graded,
            # so the document gets the best grade of its chunks.
            other = any(lab.id == hit.doc_id for lab in e.labels)
            if mine or other:
                already += 1
            if mine or (other and not options.agreement):
                if mine and human:  # graded by an earlier run: its order can still be tested
                    grade = max(
                        lab.grade for lab in labels if lab.judge == client.name
                        and lab.source == "llm" and lab.chunk_id == hit.chunk_id
                    )  # fmt: skip
                    both.append((e.query, hit, grade))
                continue
            label = _grade(run, e.query, hit, client.name)
            if label is not None:
                labels.append(label)
                grades[label.grade] += 1
                judged += 1
                if human:
                    both.append((e.query, hit, label.grade))
        new = e.model_copy(update={"labels": labels})
        result.append(
            new.model_copy(
                update={"relevant": _relevant(new, options.use, options.llm_relevant_from)}
            )
        )
    run.require_an_answer()  # every call failed: nothing judged, nothing to write
    agreed = _agreement(result, both, run, client.name, options)  # before usage is read
    report = JudgeReport(
        benchmark=name,
        collection=collection,
        model=client.name,
        modes=modes,
        search=searches,
        depth=options.depth,
        queries=len(entries),
        pooled=pooled,
        already_labelled=already,
        judged=judged,
        grades={str(g): n for g, n in sorted(grades.items())},
        usage=client.usage.model_copy(),
        labels_used=list(options.use),
        agreement=agreed,
        errors=errors,
        stopped=run.stopped,
        out=str(out),
        seconds=round(time.perf_counter() - started, 3),
    )
    return result, report


def _agreement(
    entries: list[BenchmarkEntry],
    both: list[tuple[str, PooledHit, int]],
    run: CachedAsker,
    model: str,
    options: JudgeOptions,
) -> Agreement | None:
    """``--agreement``'s report; with ``position_bias``, each pair of ``both`` (query, hit and
    its grade with the query first) graded again with the passage first."""
    if not options.agreement:
        return None
    found = kappa(entries, options.llm_relevant_from)
    if not options.position_bias:
        return found
    pairs: list[tuple[int, int]] = []
    for query, hit, grade in both:
        swapped = _grade(run, query, hit, model, passage_first=True)
        if swapped is not None:
            pairs.append((grade, swapped.grade))
    bias: PositionBias = position_bias(pairs, options.llm_relevant_from)
    return found.model_copy(update={"position": bias})


def judge(
    benchmark: Path,
    out: Path,
    *,
    options: JudgeOptions,
    collection: str | None = None,
    workspace: Workspace | None = None,
    settings: Settings | None = None,
    store: Store | None = None,
    embedder: Embedder | None = None,
    client: ChatClient | None = None,
) -> JudgeReport:
    """Judge ``benchmark``'s pooled hits on ``collection`` with ``options.llm``; write ``out``.

    The store and embedder are ``workspace``'s, or those of one built from ``settings``,
    ``store`` and ``embedder`` (:func:`ragsonde.workspace.using`). ``out`` may not be the
    benchmark (a VALIDATION_ERROR before any LLM call, as ``ragsonde judge --out`` says), nor
    can ``agreement``'s report beside it be written (:func:`~.agreement.agreement_path`)."""
    from ragsonde.ingest.sources import input_files  # a BEIR folder: its files
    from ragsonde.outputs import check_outputs

    options = options_of(options, JudgeOptions)  # a dict failed later, inside the run
    outputs = {"out": Path(out)}
    if options.agreement:  # written after every call: refused before the first
        outputs["agreement"] = agreement_path(Path(out))
    check_outputs(outputs, inputs=input_files(benchmark), rows=["out"])
    entries = read_entries(benchmark, nonempty=True)
    with using(workspace, settings, store=store, embedder=embedder) as ws:
        coll = resolve_collection(collection, ws.settings.collection)
        chat = client or ChatClient.from_settings(
            options.llm,
            ws.settings,
            budget=options.budget,
            price=options.price,
            timeout_s=options.timeout_s,
        )
        try:
            with LlmCache(ws.settings.home) as cache:
                result, report = judge_entries(
                    entries,
                    retriever=Retriever(workspace=ws),
                    collection=coll,
                    client=chat,
                    cache=cache,
                    options=options,
                    name=str(benchmark),
                    out=out,
                )
        finally:
            if client is None:
                chat.close()
    write_entries(out, result)
    if report.agreement is not None:  # beside the file, for the Judge page (agreement_path)
        from ragsonde.outputs import write_text

        write_text(agreement_path(out), report.agreement.model_dump_json(indent=2))
    return report
