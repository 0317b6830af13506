"""``generate``: a benchmark from a collection's own chunks, offline or with an LLM.

Chunks are sampled across the collection (:mod:`.sampling`), each becomes one query whose source
document is relevant, and the file is written in ragsonde's benchmark format with provenance.
Offline, the query is made from the chunk with no model (:mod:`.offline`: by default a sentence
of the chunk with its wording changed). With ``llm``, it is a question
the chunk answers (:mod:`.questions`), and the questions are then pooled over the retrieval modes
and judged (:mod:`.judge`), so other relevant documents are not counted as misses.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from ragsonde.config import Settings, load_settings
from ragsonde.embedders import Embedder
from ragsonde.errors import QueryValidationError
from ragsonde.labels.benchfile import write_entries
from ragsonde.labels.models import BenchmarkEntry, GenerateReport, JudgeReport, Usage
from ragsonde.labels.offline import DEFAULT_METHOD, generate_offline, generator_name
from ragsonde.labels.sampling import Chunk, read_chunks, stratified_sample
from ragsonde.store import Store, open_store

if TYPE_CHECKING:
    from ragsonde.labels.chat import Budget, ChatClient, Price

__all__ = ["generate"]


def generate(
    out: Path,
    *,
    collection: str | None = None,
    n: int = 200,
    seed: int = 0,
    settings: Settings | None = None,
    store: Store | None = None,
    llm: str | None = None,
    method: str = DEFAULT_METHOD,
    judge: bool = True,
    depth: int = 10,
    budget: Budget | None = None,
    price: Price | None = None,
    embedder: Embedder | None = None,
    client: ChatClient | None = None,
) -> GenerateReport:
    """Write up to ``n`` queries sampled from ``collection`` to ``out``.

    Offline by default, by ``method`` (a name in :data:`~.offline.OFFLINE_METHODS`); with ``llm``
    (``openai:MODEL``) the queries are LLM questions, pooled and judged unless ``judge`` is
    False. ``usage`` counts every call of the run.
    """
    if n < 1:
        raise QueryValidationError("--n must be at least 1.", field="n")
    started = time.perf_counter()
    cfg = settings or load_settings()
    coll = collection or cfg.collection
    own = store is None
    st = store if store is not None else open_store(cfg)
    usage: Usage | None = None
    judged: JudgeReport | None = None
    try:
        chunks = read_chunks(st, coll)
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
            entries, usage, judged = _with_llm(
                sample, out, llm, cfg, st, coll, judge, depth, budget, price, embedder, client
            )
            generator = f"llm:openai:{llm.partition(':')[2]}"
    finally:
        if own:
            st.close()
    write_entries(out, entries)
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
        seconds=round(time.perf_counter() - started, 3),
    )


def _with_llm(
    sample: list[Chunk],
    out: Path,
    llm: str,
    cfg: Settings,
    store: Store,
    collection: str,
    judge: bool,
    depth: int,
    budget: Budget | None,
    price: Price | None,
    embedder: Embedder | None,
    client: ChatClient | None,
) -> tuple[list[BenchmarkEntry], Usage, JudgeReport | None]:
    from ragsonde.labels.asker import CachedAsker
    from ragsonde.labels.cache import LlmCache
    from ragsonde.labels.chat import ChatClient
    from ragsonde.labels.judge import JudgeOptions, judge_entries
    from ragsonde.labels.questions import generate_questions
    from ragsonde.retriever import Retriever

    chat = client or ChatClient.from_settings(llm, cfg, budget=budget, price=price)
    try:
        with LlmCache(cfg.home) as cache:
            asker = CachedAsker(chat, cache)
            entries = generate_questions(sample, asker)
            report = None
            if judge and entries and asker.stopped is None:
                retriever = Retriever(cfg, store=store, embedder=embedder)
                entries, report = judge_entries(
                    entries,
                    retriever=retriever,
                    collection=collection,
                    client=chat,
                    cache=cache,
                    options=JudgeOptions(llm=llm, depth=depth),
                    name=str(out),
                    out=out,
                )
        return entries, chat.usage.model_copy(), report
    finally:
        if client is None:
            chat.close()
