"""How much a benchmark's queries give their answers away by their words: lexical leakage.

A query made from its source's own sentence shares that source's rare words, so lexical matching
finds the source trivially and a benchmark of such queries ranks BM25 above everything (issue 27:
every offline method put BM25 first on SciFact, the human labels put it third of four). Two
statistics say how much, for any benchmark, generated or human:

- ``term_overlap``: the mean share of a query's content words (lower-cased words of two or more
  letters, English stop words left out) found in its relevant documents' text, as indexed in the
  collection the benchmark is evaluated on.
- BM25's rank of the first relevant document in the top ``depth`` (``bm25_top1``: the share of
  queries where it is first; ``bm25_mrr``: the mean reciprocal rank, 0 when not in the top
  ``depth``), searched in ``sparse`` mode on that collection.

:func:`lexical_warning` compares a generated benchmark's figures with a human benchmark's on the
same collection when there is one, and with fixed bounds otherwise (measured by
``bench/bench_labels.py --quick`` on SciFact test: the human queries' BM25 top-1 share is 0.77 and
their term overlap 0.53; the sentence-copy methods' (``sentence``, ``gist``) are 1.00 and 1.00,
ICT's 0.69 and 0.45): generated labels whose BM25 finds its source first far more often than
people's queries do reward lexical retrieval for their wording, not for its quality.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from statistics import median
from typing import TYPE_CHECKING

from ragsonde.labels.models import BenchmarkEntry, Leakage
from ragsonde.labels.sampling import Chunk

if TYPE_CHECKING:
    from ragsonde.retriever import Retriever

__all__ = [
    "MARGIN",
    "MAX_BM25_TOP1",
    "MAX_TERM_OVERLAP",
    "Leakage",
    "bm25_ranks",
    "leakage",
    "lexical_warning",
    "query_terms",
]

#: Without a human benchmark to compare with: warn from these values up.
MAX_BM25_TOP1 = 0.75
MAX_TERM_OVERLAP = 0.85
#: With one: warn when the generated figure exceeds the human one by more than this.
MARGIN = 0.15

_WORD = re.compile(r"(?u)\b[^\W\d_][\w-]*[^\W_]\b")


def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def query_terms(text: str, stop: frozenset[str]) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in stop}


def bm25_ranks(
    retriever: Retriever, collection: str, entries: Sequence[BenchmarkEntry], depth: int = 100
) -> list[int | None] | None:
    """Each entry's rank of its first relevant document in BM25's (``sparse`` mode) top
    ``depth`` (None: not there, or the query failed); None when ``collection`` has no BM25
    (or a sparse vector ragsonde's BM25 cannot query)."""
    if not retriever.bm25_ready(collection):
        return None
    out: list[int | None] = []
    for e in entries:
        relevant = {d for d, g in e.relevant.items() if g >= 1}
        resp = retriever.retrieve(
            {"query_text": e.query, "top_k": depth, "mode": "sparse"}, collection=collection
        )
        rank = None
        for r in resp.results:
            if str(r.metadata.get("doc_id") or r.url or r.chunk_id) in relevant:
                rank = r.rank + 1  # 0-based in the response
                break
        out.append(rank)
    return out


def leakage(
    entries: Sequence[BenchmarkEntry],
    chunks: Sequence[Chunk],
    collection: str,
    *,
    bm25_ranks: Sequence[int | None] | None = None,
    depth: int = 100,
) -> Leakage:
    """The statistics of ``entries`` against ``chunks`` (the collection's, as indexed).

    ``bm25_ranks``: each entry's rank of its first relevant document in BM25's top ``depth``
    (None: not found), from :func:`bm25_ranks`; omitted when the collection has no BM25 vectors.
    """
    stop = _stop_words()
    text_of: dict[str, list[str]] = defaultdict(list)
    for c in chunks:
        text_of[c.doc_id].append(c.text)
    overlaps: list[float] = []
    for e in entries:
        terms = query_terms(e.query, stop)
        relevant = [d for d, g in e.relevant.items() if g >= 1]
        if not terms or not relevant:
            continue
        source = query_terms(" ".join(t for d in relevant for t in text_of.get(d, [])), stop)
        overlaps.append(len(terms & source) / len(terms))
    out = Leakage(
        collection=collection,
        queries=len(entries),
        term_overlap=round(sum(overlaps) / len(overlaps), 4) if overlaps else 0.0,
        depth=depth,
    )
    if bm25_ranks is None or not bm25_ranks:
        return out
    ranks = [r if r is not None else depth + 1 for r in bm25_ranks]
    return out.model_copy(
        update={
            "bm25_top1": round(sum(r == 1 for r in ranks) / len(ranks), 4),
            "bm25_mrr": round(sum(1 / r for r in ranks if r <= depth) / len(ranks), 4),
            "bm25_median_rank": float(median(ranks)),
        }
    )


#: What else to generate with, by what the run used (an offline method not listed: the default).
_ADVICE = {
    "": "generate with --method ict (the source sentence removed from the chunk) or an LLM.",
    "ict": "generate with an LLM (--llm), whose questions are in its own words.",
    "llm": "try another model (--llm): this one's questions repeat their source's words.",
}


def lexical_warning(
    generated: Leakage, human: Leakage | None = None, *, method: str | None = None
) -> str | None:
    """A warning when ``generated`` leaks enough to favour lexical retrieval; else None.
    ``method``: how the queries were made (an offline method, ``ict`` or ``llm``), so the
    advice names what this run did not already try."""
    if human is not None:
        why = []
        if (
            generated.bm25_top1 is not None
            and human.bm25_top1 is not None
            and generated.bm25_top1 - human.bm25_top1 > MARGIN
        ):
            why.append(
                f"BM25 finds the source first for {generated.bm25_top1:.0%} of the generated "
                f"queries against {human.bm25_top1:.0%} of the human ones"
            )
        if generated.term_overlap - human.term_overlap > MARGIN:
            why.append(
                f"{generated.term_overlap:.0%} of a generated query's words are in its source "
                f"against {human.term_overlap:.0%} for the human queries"
            )
    else:
        why = []
        if generated.bm25_top1 is not None and generated.bm25_top1 >= MAX_BM25_TOP1:
            why.append(f"BM25 finds the source first for {generated.bm25_top1:.0%} of the queries")
        if generated.term_overlap >= MAX_TERM_OVERLAP:
            why.append(f"{generated.term_overlap:.0%} of a query's words are in its source")
    if not why:
        return None
    return (
        "these generated labels favour lexical retrieval: "
        + "; ".join(why)
        + ". Systems ranked by them put BM25 too high; compare with human labels, or "
        + _ADVICE.get(method or "", _ADVICE[""])
    )
