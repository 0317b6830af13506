"""Where the answer sits inside a retrieved chunk: its text cut into marked and plain pieces.

A span-labelled question names its answer as excerpts ``(doc_id, start, end)`` of the documents'
parsed text; a chunk ingested by ragsonde records its own span the same way (``start``/``end``
next to ``chunk_index``). The part of a chunk that overlaps a reference is the answer the chunk
holds: :func:`highlight` cuts the chunk's text there, so the HTML report can show it inside a
``<mark>`` (the template escapes every piece: chunk text is untrusted). An answer split across
two chunks is marked in both, each its own part; chunks that overlap each other both mark the
text they share with the answer.

A chunk whose text is not as long as its span (a foreign layout that stores something else in
``text``) cannot be placed character by character: it comes back as one plain piece.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ragsonde.evaluate.spans import Span, union

__all__ = ["Piece", "highlight", "marked_ranges"]


@dataclass(frozen=True)
class Piece:
    """A run of a chunk's text; ``marked``: it is part of the answer."""

    text: str
    marked: bool


def marked_ranges(chunk: Span, references: Iterable[Span]) -> list[tuple[int, int]]:
    """The parts of ``chunk`` that ``references`` cover, as sorted, disjoint ``(start, end)``
    ranges relative to the chunk's start (references of other documents cover nothing)."""
    return [
        (max(start, chunk.start) - chunk.start, min(end, chunk.end) - chunk.start)
        for start, end in union(references).get(chunk.doc_id, [])
        if start < chunk.end and chunk.start < end
    ]


def highlight(text: str, chunk: Span, references: Iterable[Span]) -> list[Piece]:
    """``text`` (the chunk's, ``len(chunk)`` characters) as pieces, the answer's marked."""
    if len(text) != len(chunk):
        return [Piece(text, False)] if text else []
    pieces: list[Piece] = []
    at = 0
    for start, end in marked_ranges(chunk, references):
        if start > at:
            pieces.append(Piece(text[at:start], False))
        pieces.append(Piece(text[start:end], True))
        at = end
    if at < len(text):
        pieces.append(Piece(text[at:], False))
    return pieces
