"""Questions when there are none: span-labelled questions generated from the documents.

``ragsonde chunking DOCS`` without a benchmark makes its own: ``n`` questions (seeded), each
from one sentence of the parsed documents, whose span is the question's reference.

Which method fits chunking. The span metrics ask where in the document a question's answer is,
so the question must come from a known place, and a sentence is the smallest place a question
is about. ICT, the default of ``ragsonde generate``, does not apply: it removes the sentence
from a copy of the collection, and here the sentence is the answer every configuration's chunks
must hold. Term samples (``mixed``, ``terms``) come from a whole chunk, which the sweep does not
have yet (the chunking is what is measured). That leaves the sentence reducers, and of the two
``gist`` (:class:`~ragsonde.labels.offline.GistReducer`): one sentence, drawn by its tf-idf mass
among the sentences of its line, with a share of its words dropped, the rarest first, so the
question keeps the sentence's sense for the embedder to match and copies fewer of the rare terms
a lexical match would find it by (on SciFact it ordered systems at least as well as
``sentence``: Kendall's tau +0.47 against +0.40, ``bench/bench_labels.py``).

The units sampled are the documents' lines (a paragraph in Markdown and plain text, a whole
paragraph of a Wikipedia dump), stratified by document and section
(:func:`~ragsonde.labels.sampling.stratified_sample`), one question per line at most. What
they cannot be: questions people ask. Each is a bag of one sentence's words, and each answer is a
whole sentence, which suits splitters that cut between sentences. The sweep's report says the
questions are generated and warns about exactly that.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.datasets import Benchmark, BenchQuery, load_benchmark
from ragsonde.evaluate.spans import Span
from ragsonde.ingest.document import Document
from ragsonde.labels.offline import generate_offline, generator_name
from ragsonde.labels.sampling import Chunk, stratified_sample

__all__ = [
    "DEFAULT_QUESTIONS",
    "METHOD",
    "check_contents",
    "generated_benchmark",
    "generated_warning",
    "questions_for",
]

#: Questions generated when none are given (``ragsonde chunking --questions``).
DEFAULT_QUESTIONS = 100
#: The offline method (:data:`~ragsonde.labels.offline.OFFLINE_METHODS`), argued above.
METHOD = "gist"
_LINE = re.compile(r"[^\n]+")


def _lines(docs: Sequence[Document]) -> list[Chunk]:
    """Every non-blank line of the documents' placed sections, with its span in the document."""
    out: list[Chunk] = []
    for doc in docs:
        for section in doc.sections:
            if section.offset is None:
                continue
            for m in _LINE.finditer(section.text):
                if not m.group().strip():
                    continue
                out.append(
                    Chunk(
                        id=f"{doc.doc_id}#{section.offset + m.start()}",
                        doc_id=doc.doc_id,
                        section=section.name or "",
                        title=doc.title or "",
                        text=m.group(),
                        chunk_index=len(out),
                        start=section.offset + m.start(),
                        end=section.offset + m.end(),
                    )
                )
    return out


def generated_benchmark(docs: Sequence[Document], n: int, seed: int) -> Benchmark:
    """Up to ``n`` span-labelled questions made from ``docs`` by :data:`METHOD` (seeded:
    the same documents and seed give the same questions)."""
    units = _lines(docs)
    order = stratified_sample(units, len(units), seed)
    entries = [
        e
        for e in generate_offline(units, order, seed=seed, prefix="gen", method=METHOD)
        if e.references
    ][:n]
    if not entries:
        raise QueryValidationError(
            "No question could be generated from these documents: no line has a sentence of "
            "four content words or more. Give span-labelled questions as BENCH.",
            field="docs",
        )
    queries = [
        BenchQuery(
            e.query_id,
            e.query,
            {e.source_doc or "": 1},
            references=tuple(Span(r.doc_id, r.start, r.end) for r in e.references or ()),
            generator=e.generator,
        )
        for e in entries
    ]
    return Benchmark(f"generated ({generator_name(METHOD)}, seed {seed})", queries)


def generated_warning(bench: Benchmark, given: bool) -> str | None:
    """The warning a report on generated questions carries; None when none is generated."""
    generators = sorted({q.generator for q in bench.queries if q.generator})
    if not generators:
        return None
    made = sum(1 for q in bench.queries if q.generator)
    by = ", ".join(generators)
    where = (
        f"{made} of the {len(bench.queries)} questions of {bench.name} were generated ({by})"
        if given
        else f"The {made} questions were generated from the documents themselves by {by} (one "
        "sentence each, some of its words dropped; the sentence is the answer)"
    )
    return (
        f"{where}: generated questions favour lexical match (they share their words with their "
        "source), their answers are whole sentences (which favours splitters that cut between "
        "sentences), and they are no substitute for real ones. Confirm a close choice with "
        "questions your users ask."
    )


def questions_for(
    benchmark: str | Path | None, docs: Sequence[Document], n: int, seed: int
) -> Benchmark:
    """The span-labelled questions of the sweep: ``benchmark``'s, or ``n`` generated from
    ``docs`` when there is none (VALIDATION_ERROR for a benchmark without spans)."""
    if benchmark is None:
        return generated_benchmark(docs, n, seed)
    bench = load_benchmark(benchmark)
    if not bench.span_labelled:
        raise QueryValidationError(
            f"Benchmark {benchmark} labels no answer by span: every question needs references "
            "[{doc_id, start, end}] (or use Chroma's questions CSV), or leave BENCH out to "
            "generate questions from the documents.",
            field="dataset",
        )
    return bench


def check_contents(bench: Benchmark, documents: Sequence[Document]) -> None:
    """A reference that carries its ``content`` must find it at its offsets: a document edited
    since it was labelled moves every span after the edit, and each span metric would be
    scored against the wrong text (span recall fell from 0.917 to 0.215, silently)."""
    by_id = {d.doc_id: d for d in documents}
    for q in bench.queries:
        for r in q.references:
            if r.content is None:
                continue
            found = _text_at(by_id[r.doc_id], r.start, r.end)
            if found is not None and found != r.content:
                raise QueryValidationError(
                    f"question {q.query_id}: its reference {r.doc_id} {r.start}:{r.end} reads "
                    f"{found[:60]!r} in the document, not its content {r.content[:60]!r}: the "
                    "document changed since the question was labelled. Label it again, or "
                    "evaluate on the text it was labelled on.",
                    field="references",
                )


def _text_at(doc: Document, start: int, end: int) -> str | None:
    """``text[start:end]`` of ``doc``, from the section that holds it (None: no one section)."""
    for s in doc.sections:
        if s.offset is not None and s.offset <= start and end <= s.offset + len(s.text):
            return s.text[start - s.offset : end - s.offset]
    return None
