"""When a sweep's answer is empty, say so: configurations that made the same chunks, a budget
that reads most of the corpus, a tie at the top, a lead at k that is only longer chunks.

Documents are split at their headings first (each section apart), so on sectioned pages a
window larger than every section changes nothing: ``fixed 800/0`` and ``recursive 200/0`` can
give the same chunks. Those are measured once and reported as one row (``same_as``).
:func:`whole_document` is the other way: one document as a whole, across its headings.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from ragsonde.chunking.report import ConfigResult
from ragsonde.ingest.document import Document, Section

__all__ = [
    "MOST_OF_CORPUS",
    "budget_warning",
    "identical_warning",
    "longer_chunks_notes",
    "signature",
    "tie_warning",
    "whole_document",
]

#: The retrieved text at k (or the budget) covers this share of the corpus: any chunking finds
#: the answer, and the sweep cannot tell configurations apart.
MOST_OF_CORPUS = 0.5


def whole_document(doc: Document) -> Section | None:
    """``doc``'s sections as one, at their offsets in the document: what lies between them (the
    heading lines, which no section holds) is blank lines, so spans stay offsets into the parsed
    text and the splitters see a paragraph break there. None without placed sections."""
    placed = [s for s in doc.sections if s.offset is not None]
    if not placed:
        return None
    start = min(s.offset for s in placed if s.offset is not None)
    end = max(s.offset + len(s.text) for s in placed if s.offset is not None)
    buf = ["\n"] * (end - start)
    for s in placed:
        at = (s.offset or 0) - start
        buf[at : at + len(s.text)] = s.text
    return Section((), "".join(buf), start)


def signature(spans: Sequence[tuple[str, int, int, str]]) -> str:
    """One configuration's chunks (document, start, end, embedded text) as a digest: equal
    digests, the same chunks, the same vectors, the same results."""
    h = hashlib.sha256()
    for doc_id, start, end, text in spans:
        h.update(f"{doc_id}\x1f{start}\x1f{end}\x1f".encode())
        h.update(hashlib.sha256(text.encode()).digest())
    return h.hexdigest()


def identical_warning(results: Sequence[ConfigResult], within_sections: bool) -> str | None:
    """One line naming the configurations merged because they made identical chunks."""
    merged = [r for r in results if r.same_as]
    if not merged:
        return None
    groups = "; ".join(" = ".join([r.label, *r.same_as]) for r in merged)
    why = (
        " Documents are split at their headings first, so on sections shorter than a window, "
        "configurations that differ can cut the same chunks (--across-sections splits each "
        "document as a whole)."
        if within_sections
        else ""
    )
    return (
        f"Configurations that made identical chunks are measured once, as one row: {groups}.{why}"
    )


def budget_warning(
    results: Sequence[ConfigResult], k: int, budget: int, corpus_tokens: int
) -> str | None:
    """Where what is retrieved per question covers most of the corpus."""
    if corpus_tokens <= 0 or not results:
        return None
    at_k = max(min(k, r.costs.points) * r.lengths.p50 for r in results)
    share_k, share_b = at_k / corpus_tokens, budget / corpus_tokens
    if max(share_k, share_b) < MOST_OF_CORPUS:
        return None
    return (
        f"The retrieval budget covers most of the corpus ({corpus_tokens} word pieces in all): "
        f"k={k} chunks hold up to about {at_k:.0f} ({min(share_k, 1):.0%}) and the budget "
        f"{budget} ({min(share_b, 1):.0%}), so nearly any chunking returns the answer and the "
        "sweep cannot separate them. Lower --k and --budget, or sweep a larger corpus."
    )


def tie_warning(results: Sequence[ConfigResult], metric: str) -> str | None:
    """Where every configuration scores the same on the metric that ranks them."""
    if len(results) < 2:
        return None
    values = {round(r.metrics[metric], 6) for r in results}
    if len(values) > 1:
        return None
    return (
        f"Every configuration scores {values.pop():.4f} on {metric}: a tie at the top, so the "
        "questions do not tell the configurations apart and the recommendation is only the "
        "cheapest. Harder questions (a benchmark of your own) or a smaller budget would."
    )


def longer_chunks_notes(results: Sequence[ConfigResult], k: int, budget: int) -> list[ConfigResult]:
    """``results`` with a note on the configuration that leads span recall at k only because
    its chunks hold more text: behind another at the equal budget, with longer chunks."""
    at_k, at_b = f"span_recall@{k}", f"span_recall@{budget}t"
    if len(results) < 2 or any(at_k not in r.metrics or at_b not in r.metrics for r in results):
        return list(results)
    lead_k = max(results, key=lambda r: r.metrics[at_k])
    lead_b = max(results, key=lambda r: r.metrics[at_b])
    if (
        lead_k is lead_b
        or lead_k.metrics[at_b] >= lead_b.metrics[at_b]
        or lead_k.lengths.p50 <= lead_b.lengths.p50
    ):
        return list(results)
    note = (
        f"leads span recall@{k} ({lead_k.metrics[at_k]:.3f}) because its chunks hold more text "
        f"(median {lead_k.lengths.p50:.0f} word pieces against {lead_b.lengths.p50:.0f}); at "
        f"an equal budget of {budget} word pieces it scores {lead_k.metrics[at_b]:.3f}, behind "
        f"{lead_b.label} ({lead_b.metrics[at_b]:.3f})."
    )
    return [r.model_copy(update={"note": note}) if r is lead_k else r for r in results]
