"""``generate``: a benchmark from a collection's own chunks, offline or with an LLM.

Chunks are sampled across the collection (:mod:`.sampling`), each becomes one query whose source
document is relevant, and the file is written in ragsonde's benchmark format with provenance.
Offline, the query is made from the chunk with no model (:mod:`.offline`: by default ICT, a
sentence of the chunk, removed from it in the copy the benchmark is evaluated on). With ``llm``,
it is a question the chunk answers (:mod:`.questions`), and the questions are then pooled over
the retrieval modes and judged (:mod:`.judge`), so other relevant documents are not counted as
misses.

``--method ict`` (:mod:`.ict`) also writes the copy of the collection the benchmark must be
evaluated on (its query sentences removed); the report names it (``evaluate_on``). Every run
measures the benchmark's lexical leakage (:mod:`.leakage`) on the collection it is evaluated on,
against each query's source document (never the judged pool, which BM25 helped find), beside a
human benchmark's when one is given, and warns when it favours lexical retrieval. The
store and the embedder come from one :class:`~ragsonde.workspace.Workspace`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragsonde.config import Settings
from ragsonde.embedders import Embedder
from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.options import options_error
from ragsonde.labels.benchfile import read_entries, write_entries
from ragsonde.labels.chat import Budget, Price
from ragsonde.labels.ict import ICT_METHOD, build_ict_copy, ict_copy_whole, ict_inputs
from ragsonde.labels.leakage import Leakage, bm25_ranks, leakage, lexical_warning
from ragsonde.labels.models import BenchmarkEntry, GenerateReport, JudgeReport, Usage
from ragsonde.labels.offline import DEFAULT_METHOD, generate_offline, generator_name
from ragsonde.labels.sampling import MIN_CHARS, Chunk, read_chunks, stratified_sample
from ragsonde.labels.spans import reference
from ragsonde.models.query import CollectionName, resolve_collection
from ragsonde.models.store import Store
from ragsonde.models.validation import options_of
from ragsonde.workspace import Workspace, using

if TYPE_CHECKING:
    from ragsonde.labels.chat import ChatClient
    from ragsonde.labels.questions import Questions

__all__ = ["GenerateOptions", "generate", "measure_leakage"]


class GenerateOptions(BaseModel):
    """Options of :func:`generate`: frozen and validated like every workflow's; a bad value is a
    VALIDATION_ERROR naming the field."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    n: int = Field(default=200, ge=1, le=100_000, description="Queries to write (at most).")
    seed: int = Field(default=0, description="Sampling (and method) seed: runs repeat.")
    method: str = Field(
        default=DEFAULT_METHOD,
        description="Offline method (ragsonde.labels.offline.OFFLINE_METHODS); ignored with llm.",
    )
    llm: str | None = Field(
        default=None,
        description="openai:MODEL or local:NAME_OR_PATH: LLM questions (doc2query) instead.",
    )
    judge: bool = Field(default=True, description="With llm: pool and judge the questions.")
    depth: int = Field(default=10, ge=1, le=100, description="With llm: judged pool depth.")
    budget: Budget | None = None
    price: Price | None = None
    human: Path | None = Field(
        default=None, description="A human benchmark of the collection: its leakage beside."
    )
    ict_collection: CollectionName | None = Field(
        default=None, description="method ict: the copy's name (default <collection>-ict-s<seed>)."
    )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as e:
            raise options_error(e) from e


def generate(
    out: Path,
    *,
    collection: str | None = None,
    options: GenerateOptions | None = None,
    workspace: Workspace | None = None,
    settings: Settings | None = None,
    store: Store | None = None,
    embedder: Embedder | None = None,
    client: ChatClient | None = None,
) -> GenerateReport:
    """Write up to ``options.n`` queries sampled from ``collection`` to ``out``.

    Offline by default, by ``options.method`` (a name in :data:`~.offline.OFFLINE_METHODS`,
    ignored with ``llm``); with ``options.llm`` (``openai:MODEL`` or ``local:NAME_OR_PATH``)
    the queries are LLM questions (doc2query), pooled and judged unless ``judge`` is False.
    ``usage`` counts every call of the run. ``human``: a human benchmark of the same collection
    whose leakage is measured beside. ``ict_collection``: the name of the copy ``method="ict"``
    writes (default ``<collection>-ict-s<seed>``). ``client``: a chat client to use instead of
    the one ``llm`` names (tests, embedding apps).
    """
    o = options_of(options, GenerateOptions)
    n, seed, method, llm, human = o.n, o.seed, o.method, o.llm, o.human
    from ragsonde.ingest.sources import input_files  # a BEIR folder: its files
    from ragsonde.outputs import check_outputs

    # before any work: out == human wrote the generated queries over the human benchmark
    check_outputs({"out": Path(out)}, inputs=input_files(human), rows=["out"])
    human_entries = read_entries(human, nonempty=True) if human is not None else None
    started = time.perf_counter()
    usage: Usage | None = None
    judged: JudgeReport | None = None
    evaluate_on: str | None = None
    copy_note: str | None = None
    not_found = not_questions = 0
    with using(workspace, settings, store=store, embedder=embedder) as ws:
        cfg = ws.settings
        coll = resolve_collection(collection, cfg.collection)
        chunks = read_chunks(ws.store, coll)
        sample = stratified_sample(chunks, n, seed)
        if not sample:
            raise QueryValidationError(
                f"Collection '{coll}' has no chunk long enough to make a query from.",
                field="collection",
            )
        if llm is None:
            entries = generate_offline(chunks, sample, seed=seed, method=method)
            generator = generator_name(method)
        else:
            written, usage, judged, generator = _with_llm(
                sample, out, llm, ws, coll, o.judge, o.depth, o.budget, o.price, client
            )
            entries, not_found = written.entries, written.excerpts_not_found
            not_questions = written.not_questions
        if llm is None and method == ICT_METHOD and entries:
            evaluate_on = o.ict_collection or f"{coll}-ict-s{seed}"
            copy_note = _ict_copy(ws, coll, evaluate_on, chunks, entries, seed)
        # against each query's source only: the judged pool came from BM25's own top k, so
        # counting it made BM25 "find the source first" for documents it had found itself
        sources = [e.with_relevant_from(["generator"]) for e in entries]
        measured = measure_leakage(ws, sources, evaluate_on or coll)
        theirs = measure_leakage(ws, human_entries, coll) if human_entries is not None else None
    write_entries(out, entries)
    made_by = "llm" if llm is not None else method
    warnings = [w for w in (lexical_warning(measured, theirs, method=made_by),) if w]
    warnings += _span_warnings(sample, entries, not_found)
    if copy_note == "rebuilt":
        warnings.append(
            f"{evaluate_on} was rebuilt for these queries (other --n or --seed, or the collection "
            "changed): a benchmark generated against it before no longer matches it. Generate "
            "that one again, or give each benchmark its own --ict-collection."
        )
    made = method if llm is None else "llm"
    short = shortfall(n, chunks, sample, entries, made, not_found, not_questions)
    return GenerateReport(
        collection=coll,
        generator=generator,
        seed=seed,
        requested=n,
        written=len(entries),
        chunks_in_collection=len(chunks),
        documents_in_collection=len({c.doc_id for c in chunks}),
        documents_sampled=len({c.doc_id for c in sample}),
        sections_sampled=len({(c.doc_id, c.section) for c in sample}),
        out=str(out),
        usage=usage,
        judged=judged,
        evaluate_on=evaluate_on,
        evaluate_on_copy=copy_note,
        shortfall=short,
        leakage=measured,
        human_leakage=theirs,
        span_labelled=sum(1 for e in entries if e.references),
        excerpts_not_found=not_found,
        not_questions=not_questions,
        warnings=warnings,
        seconds=round(time.perf_counter() - started, 3),
    )


def _ict_copy(
    ws: Workspace,
    collection: str,
    target: str,
    chunks: list[Chunk],
    entries: list[BenchmarkEntry],
    seed: int,
) -> str:
    """Write the ICT copy ``target`` of ``collection``, reusing or rebuilding ragsonde's own copy;
    says which. A collection named ``target`` that ragsonde did not derive from ``collection``
    is never touched (VALIDATION_ERROR)."""
    from ragsonde.catalog import stamp_of_collection

    inputs = ict_inputs(chunks, entries, ws.embedder.name)
    verb = "built"
    if target in ws.store.list_collections():
        stamp = stamp_of_collection(ws.store, target)
        if stamp is None or stamp.of != collection or stamp.method != ICT_METHOD:
            whose = "is not a copy ragsonde made" if stamp is None else f"is a copy of {stamp.of}"
            raise QueryValidationError(
                f"Collection '{target}' already exists and {whose}: --method ict never "
                f"overwrites it. Name another with --ict-collection.",
                field="ict_collection",
            )
        if stamp.inputs != inputs:
            verb = "rebuilt"  # ragsonde's own copy, made from other inputs
        elif ict_copy_whole(ws.store, collection, target, entries):
            return "reused"
        else:
            verb = "repaired"  # the same inputs, but a build killed mid-way left it short
        ws.store.delete_collection(target)
    build_ict_copy(ws.store, ws.embedder, collection, target, entries, inputs=inputs, seed=seed)
    return verb


def shortfall(
    requested: int,
    chunks: list[Chunk],
    sample: list[Chunk],
    entries: list[BenchmarkEntry],
    method: str,
    excerpts_not_found: int = 0,
    not_questions: int = 0,
) -> str | None:
    """Why fewer queries were written than asked (None: as many as asked)."""
    if len(entries) >= requested:
        return None
    why = []
    if len(sample) < requested:
        eligible = sum(1 for c in chunks if len(c.text.strip()) >= MIN_CHARS)
        of = f" (of {len(chunks)})" if eligible < len(chunks) else ""
        why.append(
            f"the collection has {eligible} chunks of at least {MIN_CHARS} characters{of}, "
            "one query each"
        )
    dropped = len(sample) - len(entries) - excerpts_not_found
    if dropped > 0:
        rule = {
            ICT_METHOD: "a chunk needs two sentences, one of them at least 6 words, so that "
            "context is left once the sentence is removed",
            "llm": "the LLM gave no usable question, or the call budget ran out",
        }.get(method, f"{method} could not make a query from their text")
        why.append(f"{dropped} sampled chunks gave no query ({rule})")
    if excerpts_not_found:
        why.append(f"{excerpts_not_found} LLM questions had no verbatim excerpt")
    if not_questions:
        why.append(
            f"{not_questions} LLM answers were no question (a refusal such as 'I cannot "
            "decide.', or not phrased as a question)"
        )
    return f"wrote {len(entries)} of the {requested} queries asked: {'; '.join(why)}."


def _span_warnings(
    sample: list[Chunk], entries: list[BenchmarkEntry], excerpts_not_found: int
) -> list[str]:
    """What a reader of span-labelled rows must know: chunks without a span, lost excerpts."""
    out = []
    unplaced = sum(1 for c in sample if reference(c, None) is None)
    if unplaced:
        out.append(
            f"{unplaced} of the {len(sample)} sampled chunks have no span (start/end) in their "
            "document (a collection ragsonde did not ingest, or text that is not its span): "
            "their queries have no references, only relevant documents."
        )
    if excerpts_not_found:
        out.append(
            f"{excerpts_not_found} LLM questions were dropped: the excerpt that answers them is "
            "not verbatim in their chunk, so no span could be given."
        )
    return out


def measure_leakage(
    workspace: Workspace, entries: list[BenchmarkEntry], collection: str, depth: int = 100
) -> Leakage:
    """``entries``' lexical leakage on ``collection`` (:mod:`.leakage`), through the workspace."""
    from ragsonde.retriever import Retriever

    chunks: list[Chunk] = read_chunks(workspace.store, collection)
    retriever = Retriever(workspace=workspace)
    ranks = bm25_ranks(retriever, collection, entries, depth)
    return leakage(entries, chunks, collection, bm25_ranks=ranks, depth=depth)


def _with_llm(
    sample: list[Chunk],
    out: Path,
    llm: str,
    ws: Workspace,
    collection: str,
    judge: bool,
    depth: int,
    budget: Budget | None,
    price: Price | None,
    client: ChatClient | None,
) -> tuple[Questions, Usage, JudgeReport | None, str]:
    from ragsonde.labels.asker import CachedAsker
    from ragsonde.labels.cache import LlmCache
    from ragsonde.labels.chat import ChatClient
    from ragsonde.labels.judge import JudgeOptions, judge_entries
    from ragsonde.labels.questions import generate_questions
    from ragsonde.retriever import Retriever

    chat = client or ChatClient.from_settings(llm, ws.settings, budget=budget, price=price)
    try:
        with LlmCache(ws.settings.home) as cache:
            asker = CachedAsker(chat, cache)
            written = generate_questions(sample, asker)
            report = None
            if judge and written.entries and asker.stopped is None:
                written.entries, report = judge_entries(
                    written.entries,
                    retriever=Retriever(workspace=ws),
                    collection=collection,
                    client=chat,
                    cache=cache,
                    options=JudgeOptions(llm=llm, depth=depth),
                    name=str(out),
                    out=out,
                )
        return written, chat.usage.model_copy(), report, f"llm:{chat.name}"
    finally:
        if client is None:
            chat.close()
