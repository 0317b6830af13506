"""The LLM generator: for each sampled chunk, a question the chunk answers, in other words.

The answer is taken when it reads as a question (:func:`~.prompts.parse_question`: no refusal
such as "I cannot decide.", and shaped as a question) and does not copy a run of
``MAX_COPIED_WORDS`` or more words from the chunk, since a copied phrase makes a lexical-match
query that favours BM25. Questions are cached by (chunk hash, model, prompt
version), so the same seed costs nothing the second time; an answer that gave no question is
not cached, so a later run asks again. A run that wrote no question at all is LLM_ERROR and
writes nothing: it says how many answers came back and quotes the first unusable one. Each
question's source document is relevant (grade 3, ``source="generator"``, judged by the model);
``generate`` then pools and judges the questions so other relevant documents are not counted as
misses.

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

from ragsonde.errors import LlmError
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


@dataclass
class Questions:
    """The questions written, and how many were dropped for an excerpt not in their chunk."""

    entries: list[BenchmarkEntry] = field(default_factory=list)
    excerpts_not_found: int = 0
    answers: int = 0
    """Answers read (from the cache or the model), whether they gave a question or not."""
    not_questions: int = 0
    """Answers that were no question: a refusal (:data:`~.prompts.REFUSALS`), too short, or
    not shaped as a question (:func:`~.prompts.is_question`)."""
    first_unusable: str | None = None
    """The first answer that gave no question (for the error of a run that wrote none)."""

    def unusable(self, answer: str) -> None:
        """Count an answer that gave no question; remember the first."""
        self.answers += 1
        if self.first_unusable is None:
            self.first_unusable = answer


def _usable(chunk: Chunk, seen: Questions, style: str) -> Callable[[str], bool]:
    def accept(answer: str) -> bool:
        q = parse_question(answer, style)
        ok = q is not None and longest_copied_run(q, chunk.text) < MAX_COPIED_WORDS
        if not ok:
            seen.unusable(answer)
            if q is None:
                seen.not_questions += 1
        return ok

    return accept


def _placed(chunk: Chunk, style: str) -> Callable[[str], bool]:
    """Whether an answer's excerpt can be placed in ``chunk`` (or none is needed)."""
    return lambda answer: _references(chunk, answer, style)[0]


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
        got = asker.ask(
            "question",
            LlmCache.key(QUESTION_VERSIONS[style], text_hash(c.text)),
            question_messages(c.text, style),
            max_tokens=256 if style == "instruct" else 40,
            accept=_usable(c, out, style),
            keep=_placed(c, style),  # an excerpt not in the chunk: not cached
        )
        question = None if got is None else parse_question(got[0], style)
        if got is None or question is None:
            if asker.stopped is not None:
                break
            continue
        usable, refs = _references(c, got[0], style)
        if not usable:
            out.excerpts_not_found += 1
            out.unusable(got[0])
            continue
        out.answers += 1
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
    if not out.entries and out.answers:  # answers came back, none a question: say which
        raise LlmError(_no_question(len(sample), out, asker))
    asker.require_an_answer()
    if not out.entries:  # an empty file must not replace the user's --out (exit 0, "wrote 0")
        raise LlmError(_no_question(len(sample), out, asker))
    return out


def _no_question(asked: int, out: Questions, asker: CachedAsker) -> str:
    """Why a run wrote no question: the answers it had, the first unusable one, the stop."""
    name = asker.client.name
    if out.answers:
        why = (
            f"{out.answers} answers came back and none gave a usable question (a question of 3 "
            f"words or more, not a refusal, that copies no run of {MAX_COPIED_WORDS} words from "
            "its chunk"
        )
        if out.not_questions:
            why += f"; {out.not_questions} were no question at all: a refusal, or a statement"
        if out.excerpts_not_found:
            why += f"; {out.excerpts_not_found} had no excerpt found verbatim in their chunk"
        shown = (out.first_unusable or "").strip()
        shown = shown if len(shown) <= 120 else shown[:120] + "…"
        why += f"); the first: {shown!r}"
    else:
        why = "no answer came back"
    if asker.stopped is not None:
        why += f"; the run stopped: {asker.stopped}"
    return (
        f"{name}: no question from the {asked} sampled chunks: {why}. Nothing was written. "
        "Answers that gave no question are not cached, so a re-run asks again; try another "
        "model (--llm)" + (", or a larger budget." if asker.client.usage.stopped_by_budget else ".")
    )
