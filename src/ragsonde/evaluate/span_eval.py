"""The span metrics of one evaluation run: what the retrieved chunks hold of each answer.

``ragsonde eval`` on a span-labelled benchmark (:attr:`Benchmark.span_labelled`) hands every
query's ranked chunks to a :class:`SpanCollector`; at the end it scores them
(:mod:`ragsonde.evaluate.spans`) at each cut-off k, plus precision_Ω over the collection's chunks
of the referenced documents. A collection whose chunks record no span (another pipeline's) gets
a :class:`SpanSummary` that says the span metrics are not available, and no figures.

It also keeps each query's first :data:`HITS` chunks with their span and text
(:meth:`SpanCollector.hits`), which the HTML report marks the answer in
(:mod:`ragsonde.evaluate.highlight`); a chunk without a span is left out of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ragsonde.evaluate.datasets import Benchmark, BenchQuery
from ragsonde.evaluate.report import SpanHit, SpanSummary
from ragsonde.evaluate.resolve import id_values
from ragsonde.evaluate.spans import Span, precision_omega, span_of, span_scores
from ragsonde.models import Result
from ragsonde.models.payload import PayloadMapping, get_path
from ragsonde.models.store import Store
from ragsonde.models.unread import id_text

__all__ = ["HITS", "SpanCollector"]

#: Chunks per query kept with their text for the report's highlights (bounds the report's size).
HITS = 5

_NOT_AVAILABLE = (
    "Span metrics not available: {n} of {total} retrieved chunks record no span (start/end) "
    "in their payload. Collections ingested by ragsonde record them; map another pipeline's "
    "fields with --field start=PATH --field end=PATH."
)


class SpanCollector:
    """Collects each query's retrieved chunk spans (the top ``max(ks)``) and scores them."""

    def __init__(
        self,
        bench: Benchmark,
        ks: Sequence[int],
        doc_key: Callable[[Result], Any],
        mapping: PayloadMapping,
    ) -> None:
        self.bench = bench
        self.ks = sorted(ks)
        self.doc_key = doc_key
        self.mapping = mapping
        self.retrieved: dict[str, list[Span]] = {}
        self._hits: dict[str, list[SpanHit]] = {}
        self.chunks = 0
        self.without_span = 0

    def add(self, q: BenchQuery, results: Sequence[Result]) -> None:
        spans = []
        hits = []
        for rank, r in enumerate(results[: self.ks[-1]]):
            self.chunks += 1
            span = span_of(self.doc_key(r), r.metadata, self.mapping, r.text)
            if span is None:
                self.without_span += 1
                continue
            spans.append(span)
            if rank < HITS:
                score = round(r.similarity_score, 4)
                hits.append(
                    SpanHit(
                        doc_id=span.doc_id, start=span.start, end=span.end, text=r.text, score=score
                    )
                )
        self.retrieved[q.query_id] = spans
        self._hits[q.query_id] = hits

    def hits(self, query_id: str) -> list[SpanHit] | None:
        """The query's first :data:`HITS` chunks with their spans; ``None`` when some retrieved
        chunk of the run records no span (the spans are not available) or the query failed."""
        return None if self.without_span else self._hits.get(query_id)

    def score(
        self, store: Store, collection: str, doc_field: str | None
    ) -> tuple[SpanSummary, dict[str, dict[str, float]]]:
        """The summary (means) and per query id its span metrics."""
        if self.without_span:
            note = _NOT_AVAILABLE.format(n=self.without_span, total=self.chunks)
            return SpanSummary(available=False, note=note), {}
        everything = self._chunks_of(store, collection, doc_field)
        per_query: dict[str, dict[str, float]] = {}
        for q in self.bench.queries:
            got = self.retrieved.get(q.query_id)
            if got is None:  # the query failed: its error is reported elsewhere
                continue
            row: dict[str, float] = {}
            for k in self.ks:
                s = span_scores(q.references, got[:k])
                row.update(
                    {f"span_recall@{k}": s.recall, f"span_precision@{k}": s.precision}
                    | {f"span_iou@{k}": s.iou}
                )
            if everything is not None:
                row["span_precision_omega"] = precision_omega(q.references, everything)
            per_query[q.query_id] = row
        names = list(next(iter(per_query.values()), {}))
        means = {n: round(sum(r[n] for r in per_query.values()) / len(per_query), 6) for n in names}
        note = (
            "Character spans of the retrieved chunks against the answer's excerpts (Chroma's "
            "definitions: recall, precision with overlapping chunks counted twice, IoU, "
            "precision_omega over the chunks that hold the answer)."
        )
        return SpanSummary(available=True, note=note, metrics=means), per_query

    def _chunks_of(self, store: Store, collection: str, doc_field: str | None) -> list[Span] | None:
        """Every chunk of the referenced documents (precision_Ω's candidates); ``None`` when
        the documents' field is unknown (relevance by point id)."""
        if doc_field is None:
            return None
        docs = sorted({s.doc_id for q in self.bench.queries for s in q.references})
        out: list[Span] = []
        for batch in store.scroll(collection, batch_size=1024, filter={doc_field: id_values(docs)}):
            for p in batch:
                span = span_of(id_text(get_path(p.payload, doc_field)), p.payload, self.mapping)
                if span is not None:
                    out.append(span)
        return out
