"""Span metrics: how much of the answer's text the retrieved chunks hold, character by character.

A span-labelled question names its answer as excerpts, ``(doc_id, start, end)`` in ``str``
indices of the document's parsed text; a retrieved chunk is a span of the same kind (ingest
records ``start``/``end`` in every chunk's payload). For one question, with R the union of its
reference ranges and C the retrieved chunks' ranges, the definitions are those of Chroma's
technical report "Evaluating Chunking Strategies for Retrieval" (Smith & Troynikov, 2024;
``base_evaluation.py`` of ``brandonstarxel/chunking_evaluation``):

* recall = |R ∩ ∪C| / |R|
* precision = |R ∩ ∪C| / Σ|c| over the retrieved chunks (overlapping chunks count twice, so a
  chunking with overlap pays for the text it repeats)
* IoU = |R ∩ ∪C| / (Σ|c| + |R \\ ∪C|)
* precision_Ω = precision when exactly the chunks that hold some of R are retrieved: the
  ceiling the chunking allows, whatever the embedder. (Chroma's code divides by the union of
  those chunks plus R's uncovered part; the report's definition, followed here, is the precision
  above applied to them, and differs only where chunks overlap.)

Ranges of different documents never intersect; a retrieved chunk of another document still
counts in Σ|c|. A chunk without a span (a collection ingested by another pipeline) cannot be
scored: :func:`span_of` answers ``None`` for it, and the evaluation says the span metrics are not
available rather than count it as a miss.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragsonde.errors import QueryValidationError
from ragsonde.models.payload import DEFAULT_MAPPING, PayloadMapping

__all__ = [
    "SPAN_METRICS",
    "Span",
    "SpanScores",
    "omega_chunks",
    "precision_omega",
    "span_metric_names",
    "span_of",
    "span_scores",
    "union",
]

#: The span metrics at a cut-off, in the order reports show them.
SPAN_METRICS = ("span_recall", "span_precision", "span_iou")


@dataclass(frozen=True, order=True)
class Span:
    """``text[start:end]`` of document ``doc_id``."""

    doc_id: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise QueryValidationError(
                f"span {self.start}:{self.end} of '{self.doc_id}': want 0 <= start <= end",
                field="references",
            )

    def __len__(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class SpanScores:
    recall: float
    precision: float
    iou: float


def union(spans: Iterable[Span]) -> dict[str, list[tuple[int, int]]]:
    """Per document, the union of ``spans`` as sorted, disjoint ranges (empty spans dropped)."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for s in sorted(spans):
        if s.start == s.end:
            continue
        ranges = by_doc.setdefault(s.doc_id, [])
        if ranges and s.start <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], max(ranges[-1][1], s.end))
        else:
            ranges.append((s.start, s.end))
    return by_doc


def _size(merged: Mapping[str, list[tuple[int, int]]]) -> int:
    return sum(e - s for ranges in merged.values() for s, e in ranges)


def _overlap(a: Mapping[str, list[tuple[int, int]]], b: Mapping[str, list[tuple[int, int]]]) -> int:
    """|A ∩ B| of two unions of disjoint ranges (a sweep over both, per document)."""
    total = 0
    for doc, ra in a.items():
        rb = b.get(doc, [])
        i = j = 0
        while i < len(ra) and j < len(rb):
            low, high = max(ra[i][0], rb[j][0]), min(ra[i][1], rb[j][1])
            total += max(0, high - low)
            if ra[i][1] < rb[j][1]:
                i += 1
            else:
                j += 1
    return total


def _references(references: Sequence[Span]) -> dict[str, list[tuple[int, int]]]:
    merged = union(references)
    if not _size(merged):
        raise QueryValidationError(
            "a span-labelled question needs at least one non-empty reference", field="references"
        )
    return merged


def span_scores(references: Sequence[Span], retrieved: Sequence[Span]) -> SpanScores:
    """Recall, precision and IoU of ``retrieved`` chunks against ``references`` (see module)."""
    r = _references(references)
    hit = _overlap(r, union(retrieved))
    size_r = _size(r)
    total = sum(len(c) for c in retrieved)
    return SpanScores(
        recall=hit / size_r,
        precision=hit / total if total else 0.0,
        iou=hit / (total + size_r - hit),
    )


def omega_chunks(references: Sequence[Span], chunks: Iterable[Span]) -> list[Span]:
    """The chunks (of a whole chunking) that hold some of ``references``: precision_Ω's C."""
    r = union(references)
    return [c for c in chunks if _overlap(r, union([c]))]


def precision_omega(references: Sequence[Span], chunks: Iterable[Span]) -> float:
    """precision_Ω: the precision of retrieving exactly the chunks that hold some of
    ``references``, out of ``chunks`` (every chunk of the references' documents, or more)."""
    hold = omega_chunks(references, chunks)
    total = sum(len(c) for c in hold)
    return _overlap(_references(references), union(hold)) / total if total else 0.0


def span_metric_names(ks: Sequence[int]) -> list[str]:
    """``span_recall@5``, … for each cut-off, then ``span_precision_omega``."""
    return [f"{m}@{k}" for k in ks for m in SPAN_METRICS] + ["span_precision_omega"]


def span_of(
    doc_id: Any,
    payload: Mapping[str, Any],
    mapping: PayloadMapping = DEFAULT_MAPPING,
    text: str | None = None,
) -> Span | None:
    """A stored chunk's span from its payload (read through ``mapping``), or ``None`` when it
    records none. A layout that stores only where a chunk starts (LangChain's
    ``start_index``) ends it ``len(text)`` later (``text``: the chunk's, if not in
    ``payload``)."""
    start = mapping.value("start", payload)
    if doc_id is None or not isinstance(start, int) or isinstance(start, bool) or start < 0:
        return None
    end = mapping.value("end", payload)
    if not isinstance(end, int) or isinstance(end, bool):
        text = text if text is not None else mapping.value("text", payload)
        if not isinstance(text, str):
            return None
        end = start + len(text)
    return Span(str(doc_id), start, end) if end >= start else None
