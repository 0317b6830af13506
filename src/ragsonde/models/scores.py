"""Qdrant's four distances, and how each one's raw score becomes ``similarity_score``.

The engine ranks; ragsonde never re-sorts. For the contract's ``similarity_score`` (in [0, 1],
higher is closer) each distance has one documented monotone map of the engine's raw score,
which stays in ``raw_score`` untouched:

============  ======================  =====================  ===================================
distance      raw score (engine)      ``similarity_score``   ``score_threshold`` t keeps
============  ======================  =====================  ===================================
Cosine        cosine, in [-1, 1]      clamp(s, 0, 1)         cosine ≥ t
Dot           dot product, unbounded  clamp(s, 0, 1)         dot ≥ t (for t < 1; = cosine on
                                                             unit vectors)
Euclid        L2 distance d ≥ 0       1 / (1 + d)            d ≤ 1/t − 1
Manhattan     L1 distance d ≥ 0       1 / (1 + d)            d ≤ 1/t − 1
============  ======================  =====================  ===================================

Cosine and Dot keep the contract's "cosine similarity clamped into [0, 1]", so a collection of
unit vectors gives the same ``similarity_score`` under either. Clamping is monotone but not
strictly: scores below 0 (or, for Dot, above 1) tie at the bound, and their order is the engine's.

In ``mode=hybrid`` the raw score is the fusion's, not a distance, and ``similarity_score`` is the
same clamp of it on every distance (``mode=sparse``: BM25's score, clamped too;
:func:`similarity_in`):

============  =========================================  ====================================
fusion        raw score                                  range
============  =========================================  ====================================
rrf           Σ weight / (k + rank) over the two lists   (0, 2/k] with equal weights
dbsf          Σ of each list's score, normalised by its  about [0, 2]
              mean ± 3 standard deviations
linear        w_d · cosine + w_s · bm25 / max_bm25       [−w_d, w_d + w_s]
              (fused by ragsonde: ``store._fusion``)
============  =========================================  ====================================

The label-free signals (top-1, gap, NQC, z-score, their percentiles: ``ragsonde.traffic``) read a
third form, :data:`ORIENTATION`: the raw score turned so that higher is closer, and nothing else.

============  ======================  ==============================================
distance      oriented score          why
============  ======================  ==============================================
Cosine, Dot   the raw score           already higher-is-better: the signals (and
                                      every figure measured on a Cosine collection)
                                      are unchanged
Euclid,       −d (the negated         a distance is lower-is-better; negating it keeps
Manhattan     distance)               every gap and standard deviation as the engine
                                      measured them (``1 / (1 + d)`` would squeeze
                                      far distances together)
============  ======================  ==============================================

On a distance collection the top-1 signal is then ≤ 0 (−0.6 is closer than −0.9), and NQC's
denominator, the absolute mean of the depth-100 scores, is the mean distance of that list: NQC
reads the spread of the top k relative to how far the list lies as a whole, as it reads the
spread of the top k relative to the corpus's mean similarity on Cosine. On unit vectors the
Euclid distance is ``√(2 − 2·cosine)``, so the oriented top-1 is a strictly increasing function
of the cosine top-1 (the same percentile among the collection's own sentences). Hybrid fused
scores and BM25 scores are higher-is-better already and are not oriented.

Where scores are added rather than compared (``fusion = "linear"``, a document as the sum of its
chunks), a side that did not find a point adds 0, which must be farther than any point found: a
negated distance is ≤ 0, so there the distance is read as its ``similarity_score``
(:func:`summable_of`), and a similarity as itself.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

__all__ = [
    "ORIENTATION",
    "SIMILARITY",
    "Distance",
    "is_distance",
    "oriented_of",
    "similarity_in",
    "similarity_of",
    "summable_of",
]


class Distance(StrEnum):
    """Qdrant's distance names, spelled as both qdrant-client and qdrant-edge spell them."""

    COSINE = "Cosine"
    DOT = "Dot"
    EUCLID = "Euclid"
    MANHATTAN = "Manhattan"


def _clamp(score: float) -> float:
    return 0.0 if score < 0.0 else 1.0 if score > 1.0 else score


def _inverse(distance: float) -> float:
    return 1.0 / (1.0 + distance) if distance > 0.0 else 1.0


#: distance -> raw engine score -> similarity_score in [0, 1] (monotone: closer is higher).
SIMILARITY: dict[Distance, Callable[[float], float]] = {
    Distance.COSINE: _clamp,
    Distance.DOT: _clamp,
    Distance.EUCLID: _inverse,
    Distance.MANHATTAN: _inverse,
}


def similarity_of(distance: str) -> Callable[[float], float]:
    """The map for ``distance`` (a :class:`Distance` or its name)."""
    return SIMILARITY[Distance(distance)]


def similarity_in(distance: str, mode: str) -> Callable[[float], float]:
    """The map of a search in ``mode`` of a ``distance`` collection: the distance's own in
    ``dense`` mode; the clamp otherwise, whatever the distance, for a BM25 or fused score is
    higher-is-better (``1 / (1 + s)`` of one ranked the best last and a threshold cut it
    first)."""
    return similarity_of(distance) if mode == "dense" else _clamp


#: distance -> the sign that turns its raw engine score into the score the label-free signals
#: and ragsonde's DBSF of a distance collection read: higher is closer, differences kept (the
#: module's last table). -1: the engine's score is a distance.
ORIENTATION: dict[Distance, float] = {
    Distance.COSINE: 1.0,
    Distance.DOT: 1.0,
    Distance.EUCLID: -1.0,
    Distance.MANHATTAN: -1.0,
}


def _same(score: float) -> float:
    return score


def _negated(distance: float) -> float:
    return -distance


def oriented_of(distance: str) -> Callable[[float], float]:
    """The orientation of ``distance``'s raw scores (a :class:`Distance` or its name): the
    score itself, or its negation where the engine gives a distance."""
    return _same if ORIENTATION[Distance(distance)] > 0 else _negated


def is_distance(distance: str) -> bool:
    """Whether ``distance``'s raw score is a distance (lower is closer)."""
    return ORIENTATION[Distance(distance)] < 0


def summable_of(distance: str) -> Callable[[float], float]:
    """The score that is added up (linear fusion, a sum of a document's chunks): the raw score
    where it is a similarity, ``similarity_score`` (``1 / (1 + d)``) where it is a distance, so
    that 0 (a side that did not find the point) is farther than any point found."""
    return similarity_of(distance) if is_distance(distance) else _same
