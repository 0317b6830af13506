"""The LLM generator: for each sampled chunk, a question the chunk answers, in other words.

The answer is taken when it reads as a question (:func:`~.prompts.parse_question`) and does not
copy a run of ``MAX_COPIED_WORDS`` or more words from the chunk, since a copied phrase makes a
lexical-match query that favours BM25. Questions are cached by (chunk hash, model, prompt
version), so the same seed costs nothing the second time. Each question's source document is
relevant (grade 3, ``source="generator"``, judged by the model); ``generate`` then pools and judges
the questions so other relevant documents are not counted as misses.

The instruction prompt also asks for the excerpt of the chunk that answers the question. When the
chunk has a span in its document, the excerpt is looked for verbatim in the chunk
(:func:`~.spans.locate`) and becomes the row's ``references``; a question whose excerpt is not
found is dropped (and counted), never given offsets of its own making. A chunk without a span
keeps its question without references, and so does a base model's few-shot prompt, which asks
for no excerpt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ragsonde.labels.asker import CachedAsker
from ragsonde.labels.cache import LlmCache, text_hash
from ragsonde.labels.models import BenchmarkEntry, Reference
from ragsonde.labels.prompts import (
    QUESTION_VERSIONS,
    longest_copied_run,
    parse_excerpt,
    parse_question,
    question_messages,
)
from ragsonde.labels.sampling import Chunk
from ragsonde.labels.spans import locate, reference

__all__ = ["MAX_COPIED_WORDS", "Questions", "generate_questions"]

MAX_COPIED_WORDS = 6


def _usable(chunk: Chunk) -> Callable[[str], bool]:
    def accept(answer: str) -> bool:
        q = parse_question(answer)
        return q is not None and longest_copied_run(q, chunk.text) < MAX_COPIED_WORDS

    return accept


@dataclass
class Questions:
    """The questions written, and how many were dropped for an excerpt not in their chunk."""

    entries: list[BenchmarkEntry] = field(default_factory=list)
    excerpts_not_found: int = 0


def _references(chunk: Chunk, answer: str, style: str) -> tuple[bool, list[Reference] | None]:
    """``(usable, references)``: the excerpt's span in the document; no references when none
    is asked or can be placed (a chunk without a span); not usable when the excerpt is missing
    or not verbatim in the chunk."""
    if style != "instruct" or reference(chunk, None) is None:
        return True, None
    excerpt = parse_excerpt(answer)
    at = None if excerpt is None else locate(excerpt, chunk.text)
    ref = None if at is None else reference(chunk, at)
    return ref is not None, None if ref is None else [ref]


def generate_questions(sample: Sequence[Chunk], asker: CachedAsker) -> Questions:
    """One question per sampled chunk, while the budget lasts and calls do not keep failing."""
    out = Questions()
    model = asker.client.name
    style = asker.client.style
    for n, c in enumerate(sample):
        accept = _usable(c)
        got = asker.ask(
            "question",
            LlmCache.key(QUESTION_VERSIONS[style], text_hash(c.text)),
            question_messages(c.text, style),
            max_tokens=256 if style == "instruct" else 40,
            accept=accept,
        )
        question = None if got is None else parse_question(got[0])
        if got is None or question is None:
            if asker.stopped is not None:
                break
            continue
        usable, refs = _references(c, got[0], style)
        if not usable:
            out.excerpts_not_found += 1
            continue
        out.entries.append(
            BenchmarkEntry.known_item(
                f"llm-{n:05d}",
                question,
                doc_id=c.doc_id,
                chunk_id=c.id,
                generator=f"llm:{model}",
                judge=model,
                at=got[1],
                references=refs,
            )
        )
    asker.require_an_answer()
    return out
