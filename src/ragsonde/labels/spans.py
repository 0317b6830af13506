"""Where a generated question comes from: its source's span in the parsed document.

A chunk ragsonde ingested carries its span in the parsed document (``start``/``end`` in its
payload, :func:`ragsonde.ingest.pipeline.chunk_document`), so a query made from one of its
sentences knows that sentence's span: ``start + offset``. The generator writes it as the row's
``references: [{doc_id, start, end}]`` (the format span-labelled benchmarks use,
:mod:`ragsonde.evaluate.datasets`), beside ``relevant``. A chunk without a span (a collection
ragsonde did not ingest) gives none: its questions are document-labelled only.

Sentences here are the offline methods' own rule (:func:`sentence_spans`: an end mark, space,
then a capital, digit or bracket), the rule their figures in :mod:`.offline` were measured
with, not the ``sentence`` splitter's pysbd. Offsets are never invented: a sentence's span is
where that rule found it in the chunk's text, and an LLM's excerpt counts only once
:func:`locate` finds it verbatim there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragsonde.labels.models import Reference

if TYPE_CHECKING:
    import numpy as np

    from ragsonde.labels.sampling import Chunk

__all__ = ["Made", "MakesQueries", "locate", "reference", "sentence_spans"]

# A sentence ends at . ! or ? followed by space and a capital, digit or opening bracket.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``text``'s sentences as ``(start, end)`` ``str`` indices, surrounding space trimmed:
    ``text[start:end]`` is the sentence as written."""
    out: list[tuple[int, int]] = []
    at = 0
    for m in [*_SENTENCE_END.finditer(text), None]:
        end = len(text) if m is None else m.start()
        piece = text[at:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            out.append((at + lead, at + len(piece.rstrip())))
        if m is not None:
            at = m.end()
    return out


def locate(excerpt: str, text: str) -> tuple[int, int] | None:
    """Where ``excerpt`` is in ``text`` verbatim (its words in order, any run of white space
    between them matching any other), or None. The first occurrence; case counts."""
    words = excerpt.strip().strip("\"'“”").split()
    if not words:
        return None
    exact = text.find(" ".join(words))
    if exact >= 0:
        return exact, exact + len(" ".join(words))
    m = re.search(r"\s+".join(re.escape(w) for w in words), text)
    return None if m is None else (m.start(), m.end())


def reference(chunk: Chunk, at: tuple[int, int] | None) -> Reference | None:
    """The document span of ``chunk.text[at[0]:at[1]]`` (the whole chunk when ``at`` is None),
    or None when the chunk has no span or its span does not match its text."""
    if chunk.start is None or chunk.end is None or chunk.end - chunk.start != len(chunk.text):
        return None  # a foreign collection, or a payload whose text is not its span
    s, e = at if at is not None else (0, len(chunk.text))
    if not 0 <= s < e <= len(chunk.text):
        return None
    return Reference(doc_id=chunk.doc_id, start=chunk.start + s, end=chunk.start + e)


@dataclass(frozen=True)
class Made:
    """A generated query and where it comes from in its chunk's text: the sentence's
    ``(start, end)``, or None when it comes from the whole chunk (term samples)."""

    text: str
    at: tuple[int, int] | None = None


class MakesQueries:
    """An offline method's :meth:`query`, the text of its :meth:`make`."""

    def make(self, chunk: Chunk, rng: np.random.Generator) -> Made | None:
        raise NotImplementedError

    def query(self, chunk: Chunk, rng: np.random.Generator) -> str | None:
        made = self.make(chunk, rng)
        return None if made is None else made.text
