"""The search being explained, as one typed model, and how its hits become ranked documents.

:class:`Pipeline` is what a run searched with: the mode, the search-time parameters, the
threshold, how many chunks were fetched before collapsing them into documents, and how chunks
became documents. It is read from an evaluation report's ``search`` block
(:meth:`Pipeline.of_report`); parameters that block does not carry yet come from the settings.
:meth:`Pipeline.spec` turns it into the store's :class:`~ragsonde.store.SearchSpec` for one query;
the ladder (:mod:`.ladder`) relaxes copies of that spec, one stage at a time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragsonde.evaluate.aggregation import Aggregation, aggregate
from ragsonde.store import Distance, FilterSpec, Hit, SearchSpec, similarity_of
from ragsonde.store.base import SparseVector
from ragsonde.store.payload import get_path
from ragsonde.store.resolve import POINT_ID

if TYPE_CHECKING:
    from ragsonde.config import Settings

__all__ = ["Pipeline", "Ranking"]

#: The search-time parameters read from the settings when a report does not name them.
_KNOBS = (
    "hnsw_ef",
    "quantization_rescore",
    "quantization_oversampling",
    "rrf_k",
    "fusion_weights",
    "prefetch_limit",
)
#: Chunks fetched per document of k when relevance is by document (the evaluation's oversampling).
OVERSAMPLE = 3


def _setting(settings: Settings, name: str) -> Any:
    """A search setting: the nested ``search`` block where the settings have one, else the flat
    field of the same name."""
    nested = getattr(settings, "search", None)
    if nested is not None and hasattr(nested, name):
        return getattr(nested, name)
    return getattr(settings, name, None)


def parse_aggregation(label: str) -> Aggregation:
    """``max``, ``sumN`` or ``chunk`` (a report's ``search.aggregation``) as an Aggregation."""
    if label.startswith("sum") and label[3:].isdigit():
        return Aggregation(method="sum", n=int(label[3:]))
    return Aggregation()


class Pipeline(BaseModel):
    """One run's search, everything the ladder relaxes."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    mode: Literal["dense", "sparse", "hybrid"] = "dense"
    exact: bool = False
    fusion: Literal["rrf", "dbsf", "linear"] = "rrf"
    score_threshold: float = Field(default=0.0, ge=0.0, le=1.0)
    fetch: int = Field(ge=1, description="Chunks fetched before collapsing into documents.")
    aggregation: str = "max"
    doc_path: str = Field(description="Payload path of a document's id ('@id': the point id).")
    hnsw_ef: int | None = None
    quantization_rescore: bool | None = None
    quantization_oversampling: float | None = None
    rrf_k: int | None = None
    fusion_weights: tuple[float, float] | None = None
    prefetch_limit: int | None = None

    @classmethod
    def of_report(cls, search: Any, settings: Settings, doc_path: str) -> Pipeline:
        """From an :class:`~ragsonde.evaluate.report.SearchInfo` (what the run used); the knobs
        it does not carry come from ``settings`` (what the run read them from)."""
        knobs = {
            name: getattr(search, name, None)
            if getattr(search, name, None) is not None
            else _setting(settings, name)
            for name in _KNOBS
        }
        return cls(
            mode=search.mode,
            exact=search.exact,
            fusion=search.fusion or _setting(settings, "fusion") or "rrf",
            score_threshold=search.score_threshold,
            fetch=max(1, search.fetch_chunks),
            aggregation=search.aggregation,
            doc_path=doc_path,
            **knobs,
        )

    @classmethod
    def of_settings(cls, settings: Settings, k: int, doc_path: str, **over: Any) -> Pipeline:
        """What ``ragsonde eval`` would search with for cutoff ``k`` under ``settings``."""
        n = int(_setting(settings, "aggregation_n") or 1)
        summed = _setting(settings, "aggregation") == "sum"
        how = Aggregation.of("sum", n) if summed else Aggregation()
        fields: dict[str, Any] = {
            "mode": settings.mode,
            "exact": settings.exact,
            "fusion": _setting(settings, "fusion") or "rrf",
            "score_threshold": _setting(settings, "score_threshold") or 0.0,
            "fetch": k if doc_path == POINT_ID else k * OVERSAMPLE,
            "aggregation": how.label,
            "doc_path": doc_path,
            **{name: _setting(settings, name) for name in _KNOBS},
        }
        fields.update({key: v for key, v in over.items() if v is not None})
        return cls(**fields)

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
        return SearchSpec(
            vector=vector if self.mode != "sparse" else None,
            limit=self.fetch,
            filter=filter,
            exact=self.exact,
            mode=self.mode,
            sparse=sparse if self.mode != "dense" else None,
            fusion=self.fusion,
            hnsw_ef=self.hnsw_ef,
            quantization_rescore=self.quantization_rescore,
            quantization_oversampling=self.quantization_oversampling,
            rrf_k=self.rrf_k,
            fusion_weights=self.fusion_weights,
            prefetch_limit=self.prefetch_limit,
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
        similarity = similarity_of(distance)
        how = parse_aggregation(pipeline.aggregation)
        # a sum adds the engine's scores where they are similarities (as the evaluation does)
        raw = pipeline.mode != "dense" or distance in (Distance.COSINE, Distance.DOT)
        every: list[tuple[str, float]] = []
        kept: list[tuple[str, float]] = []
        chunks: dict[str, int] = {}
        best: dict[str, float] = {}
        for hit in hits:
            doc = doc_of(hit, pipeline.doc_path)
            if doc is None:
                continue
            chunks[doc] = chunks.get(doc, 0) + 1
            sim = similarity(hit.score)
            best[doc] = max(best.get(doc, sim), sim)
            pair = (doc, hit.score if raw else sim)
            every.append(pair)
            if sim >= pipeline.score_threshold:
                kept.append(pair)
        return cls(aggregate(every, how), aggregate(kept, how), chunks, best, len(hits))

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
    value = get_path(hit.payload, path)
    return None if value is None else str(value)
