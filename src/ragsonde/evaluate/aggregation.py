"""How ranked chunks become ranked documents, for evaluation by document and for ``tune``.

A document that was split into chunks is retrieved as several hits; its score is one of
:data:`AGGREGATIONS` applied to its best chunk scores (hits arrive best first):

- ``max``: the best chunk's score, ``s₁`` (the default; the document keeps its best chunk's place);
- ``sum``: the sum of its ``n`` best chunk scores, ``s₁ + … + sₙ`` (a document that matches in
  several places climbs).

``ragsonde eval`` (the ``aggregation`` and ``aggregation_n`` settings) and the ``tune`` sweep
both call :func:`aggregate`, so the sweep measures what evaluation then does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AGGREGATIONS", "Aggregation", "ScoredChunk", "aggregate", "collapse"]

AggregationMethod = Literal["max", "sum"]

#: method -> a document's chunk scores (best first, at most ``n``) -> the document's score.
AGGREGATIONS: dict[str, Callable[[Sequence[float]], float]] = {
    "max": lambda scores: scores[0],
    "sum": lambda scores: float(sum(scores)),
}
if set(AGGREGATIONS) != set(get_args(AggregationMethod)):  # pragma: no cover - a bug
    raise RuntimeError("AGGREGATIONS and AggregationMethod disagree")


class Aggregation(BaseModel):
    """How ranked chunks become ranked documents: the best chunk's score (``max``), or the sum
    of a document's ``n`` best chunk scores (``sum``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    method: AggregationMethod = "max"
    n: int = Field(default=1, ge=1, le=20)

    @classmethod
    def of(cls, method: AggregationMethod, n: int) -> Aggregation:
        """From the ``aggregation`` and ``aggregation_n`` settings (``n`` counts for ``sum``)."""
        return cls(method=method, n=n if method == "sum" else 1)

    @property
    def label(self) -> str:
        return "max" if self.method == "max" else f"sum{self.n}"


def aggregate(ranked: Iterable[tuple[str, float]], how: Aggregation) -> dict[str, float]:
    """``(document, chunk score)`` pairs, best first -> document scores, best first.

    Ties keep the order of each document's first chunk (the sort is stable), so ``max`` ranks
    documents exactly as their best chunks were ranked.
    """
    docs: dict[str, list[float]] = {}
    keep = 1 if how.method == "max" else how.n
    for doc, score in ranked:
        scores = docs.setdefault(doc, [])
        if len(scores) < keep:
            scores.append(score)
    combine = AGGREGATIONS[how.method]
    scored = [(d, combine(s)) for d, s in docs.items()]
    if how.method != "max":
        scored.sort(key=lambda item: item[1], reverse=True)
    return dict(scored)


#: One hit as :func:`collapse` reads it: its document (``None``: it names none, and is skipped),
#: its similarity score and the engine's raw score (``None``: the engine gave none).
ScoredChunk = tuple[object | None, float, float | None]


def collapse(
    hits: Iterable[ScoredChunk], how: Aggregation, *, raw: bool = False
) -> dict[str, float]:
    """Ranked hits -> ranked documents by ``how`` (:func:`aggregate`): by default the first
    (best) chunk of each document keeps its place. The one collapse of the evaluation and of
    ``explain`` (which must rank documents exactly as the evaluation did).

    The score kept is the similarity (higher is closer under every distance), or with ``raw``
    the engine's score (where it is a similarity too: cosine, dot, BM25, fused), which is what a
    sum adds up without the clamp's ties and what ``tune`` measured."""
    return aggregate(
        (
            (str(doc), score if raw and score is not None else similarity)
            for doc, similarity, score in hits
            if doc is not None
        ),
        how,
    )
