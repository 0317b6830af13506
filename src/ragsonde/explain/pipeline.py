"""The search being explained, as one typed model, and how its hits become ranked documents.

:class:`Pipeline` is what a run searched with: the mode, the search-time parameters, the
threshold, how many chunks were fetched before collapsing them into documents, and how chunks
became documents. It is read from an evaluation report's ``search`` block
(:meth:`Pipeline.of_report`: ``params``, every parameter that ran), or from the settings for one
query (:meth:`Pipeline.of_settings`). :meth:`Pipeline.spec` turns it into a store
search, a :class:`~ragsonde.models.points.SearchSpec` for one query (``SearchSpec.of``, as the
retriever does); the ladder (:mod:`.ladder`) relaxes copies of that spec, one stage at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragsonde.evaluate.aggregation import Aggregation, collapse
from ragsonde.evaluate.resolve import POINT_ID
from ragsonde.models.params import SearchParams
from ragsonde.models.payload import get_path
from ragsonde.models.points import FilterSpec, Hit, SearchSpec, SparseVector
from ragsonde.models.scores import Distance, is_distance, similarity_in
from ragsonde.models.unread import id_text

if TYPE_CHECKING:
    from ragsonde.config import Settings
    from ragsonde.evaluate.report import SearchInfo

__all__ = ["Pipeline", "Ranking", "doc_of", "parse_aggregation"]

#: Chunks fetched per document of k when relevance is by document (the evaluation's oversampling).
OVERSAMPLE = 3


def parse_aggregation(label: str) -> Aggregation:
    """``max``, ``sumN`` or ``chunk`` (a report's ``search.aggregation``) as an Aggregation."""
    if label.startswith("sum") and label[3:].isdigit():
        return Aggregation(method="sum", n=int(label[3:]))
    return Aggregation()


class Pipeline(BaseModel):
    """One run's search, everything the ladder relaxes: the search parameters that ran, how many
    chunks were fetched before collapsing, and where a chunk names its document."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    params: SearchParams
    fetch: int = Field(ge=1, description="Chunks fetched before collapsing into documents.")
    aggregation: str = "max"
    doc_path: str = Field(description="Payload path of a document's id ('@id': the point id).")

    @classmethod
    def of_report(cls, search: SearchInfo, settings: Settings, doc_path: str) -> Pipeline:
        """From a report's ``search`` block: the parameters that ran (``params``); a report
        saved before they were recorded gives its mode, exact and threshold, over the settings'."""
        params = search.params
        if params is None:
            params = settings.search.overlay(
                {
                    "mode": search.mode,
                    "exact": search.exact,
                    "score_threshold": search.score_threshold,
                }
            )
        return cls(
            params=params,
            fetch=max(1, search.fetch_chunks),
            aggregation=search.aggregation,
            doc_path=doc_path,
        )

    @classmethod
    def of_settings(
        cls,
        settings: Settings,
        k: int,
        doc_path: str,
        *,
        fetch: int | None = None,
        score_threshold: float | None = None,
    ) -> Pipeline:
        """What ``ragsonde eval`` would search with for cutoff ``k`` under ``settings``."""
        params = settings.search.overlay({"score_threshold": score_threshold})
        how = Aggregation.of(params.aggregation, params.aggregation_n)
        default = k if doc_path == POINT_ID else k * OVERSAMPLE
        return cls(params=params, fetch=fetch or default, aggregation=how.label, doc_path=doc_path)

    # the parameters the ladder reads, by name
    @property
    def mode(self) -> Literal["dense", "sparse", "hybrid"]:
        return self.params.mode

    @property
    def exact(self) -> bool:
        return self.params.exact

    @property
    def fusion(self) -> str:
        return self.params.fusion

    @property
    def score_threshold(self) -> float:
        return self.params.score_threshold

    @property
    def hnsw_ef(self) -> int | None:
        return self.params.hnsw_ef

    @property
    def quantization_rescore(self) -> bool | None:
        return self.params.quantization_rescore

    @property
    def by_chunk(self) -> bool:
        return self.doc_path == POINT_ID

    def spec(
        self,
        vector: Sequence[float] | None,
        sparse: SparseVector | None,
        filter: FilterSpec | None,
    ) -> SearchSpec:
        """The search as the run made it, for one embedded query."""
        return SearchSpec.of(
            self.params,
            vector=vector if self.mode != "sparse" else None,
            sparse=sparse if self.mode != "dense" else None,
            filter=filter,
            limit=self.fetch,
        )


@dataclass(frozen=True)
class Ranking:
    """One search's hits collapsed into documents, as the evaluation collapses them."""

    docs: dict[str, float]
    """Document -> score, best first (every hit, no threshold)."""
    kept: dict[str, float]
    """The same with the score threshold applied (what the run returned)."""
    chunks: dict[str, int]
    """Document -> how many of the fetched chunks it holds."""
    similarity: dict[str, float]
    """Document -> its best chunk's similarity (what the threshold compares)."""
    fetched: int

    @classmethod
    def empty(cls) -> Ranking:
        return cls({}, {}, {}, {}, 0)

    @classmethod
    def of(cls, hits: Sequence[Hit], pipeline: Pipeline, distance: Distance) -> Ranking:
        similarity = similarity_in(distance, pipeline.mode)
        how = parse_aggregation(pipeline.aggregation)
        # a sum adds the engine's scores where they are similarities (as the evaluation does)
        raw = pipeline.mode != "dense" or not is_distance(distance)
        scored = [
            (doc_of(hit, pipeline.doc_path), similarity(hit.score), hit.score) for hit in hits
        ]
        chunks: dict[str, int] = {}
        best: dict[str, float] = {}
        for doc, sim, _ in scored:
            if doc is not None:
                chunks[doc] = chunks.get(doc, 0) + 1
                best[doc] = max(best.get(doc, sim), sim)
        kept = [s for s in scored if s[1] >= pipeline.score_threshold]
        return cls(
            collapse(scored, how, raw=raw), collapse(kept, how, raw=raw), chunks, best, len(hits)
        )

    def rank(self, doc: str, *, kept: bool = False) -> int | None:
        """``doc``'s 1-based rank (``kept``: after the threshold); None when absent."""
        order = self.kept if kept else self.docs
        for i, d in enumerate(order, start=1):
            if d == doc:
                return i
        return None

    def within(self, doc: str, k: int, *, kept: bool = False) -> bool:
        r = self.rank(doc, kept=kept)
        return r is not None and r <= k

    def top(self, k: int) -> list[str]:
        return list(self.kept)[:k]


def doc_of(hit: Hit, path: str) -> str | None:
    """The document id a hit belongs to (its point id for ``@id``)."""
    if path == POINT_ID:
        return hit.id
    return id_text(get_path(hit.payload, path))  # a list or an object is no id: no document
