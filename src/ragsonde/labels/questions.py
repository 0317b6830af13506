"""The LLM generator: for each sampled chunk, a question the chunk answers, in other words.

The answer is taken when it reads as a question (:func:`~.prompts.parse_question`) and does not
copy a run of ``MAX_COPIED_WORDS`` or more words from the chunk, since a copied phrase makes a
lexical-match query that favours BM25. Questions are cached by (chunk hash, model, prompt
version), so the same seed costs nothing the second time. Each question's source document is
relevant (grade 3, ``source="generator"``, judged by the model); ``generate`` then pools and judges
the questions so other relevant documents are not counted as misses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragsonde.labels.asker import CachedAsker
from ragsonde.labels.cache import LlmCache, text_hash
from ragsonde.labels.models import BenchmarkEntry
from ragsonde.labels.prompts import (
    QUESTION_VERSIONS,
    longest_copied_run,
    parse_question,
    question_messages,
)
from ragsonde.labels.sampling import Chunk

__all__ = ["MAX_COPIED_WORDS", "generate_questions"]

MAX_COPIED_WORDS = 6


def _usable(chunk: Chunk) -> Callable[[str], bool]:
    def accept(answer: str) -> bool:
        q = parse_question(answer)
        return q is not None and longest_copied_run(q, chunk.text) < MAX_COPIED_WORDS

    return accept


def generate_questions(sample: Sequence[Chunk], asker: CachedAsker) -> list[BenchmarkEntry]:
    """One question per sampled chunk, while the budget lasts and calls do not keep failing."""
    out: list[BenchmarkEntry] = []
    model = asker.client.name
    style = asker.client.style
    for n, c in enumerate(sample):
        accept = _usable(c)
        got = asker.ask(
            "question",
            LlmCache.key(QUESTION_VERSIONS[style], text_hash(c.text)),
            question_messages(c.text, style),
            max_tokens=96 if style == "instruct" else 40,
            accept=accept,
        )
        question = None if got is None else parse_question(got[0])
        if got is None or question is None:
            if asker.stopped is not None:
                break
            continue
        out.append(
            BenchmarkEntry.known_item(
                f"llm-{n:05d}",
                question,
                doc_id=c.doc_id,
                chunk_id=c.id,
                generator=f"llm:{model}",
                judge=model,
                at=got[1],
            )
        )
    return out
