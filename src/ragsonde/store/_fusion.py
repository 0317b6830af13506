"""``fusion = "linear"``: the convex combination of the two sides' scores, fused by ragsonde.

Bruch, Gai & Ingber, "An Analysis of Fusion Functions for Hybrid Retrieval" (TOIS 2023) show that
a convex combination of normalised scores beats RRF, and that the best normalisation is the
*theoretical* min-max (TM2C2): each score scaled by the range it can take. A cosine's range is
known ([-1, 1]), so it is taken as is; BM25's is not, so it is divided by the highest BM25 score
among that query's sparse candidates::

    score = w_dense * cosine + w_sparse * bm25 / max(bm25 over the sparse list)

A point only one side found scores 0 for the other; an empty (or all-zero) sparse list adds 0.
On SciFact (300 test queries) this gives 0.7394 nDCG@10 at weights (0.7, 0.3) with 1000
candidates per side, against 0.7302 for the per-point ``bm25 / (bm25 + 60)`` it replaced and
0.7350 for DBSF.

A Qdrant formula scores one point at a time and cannot see a list's maximum, so the stores run
the two candidate searches (no payload) and fuse here; :class:`SearchPlan` is that split for a
batch of searches, shared by both stores. The ``tune`` sweep fuses with the same
:func:`fuse_linear`, so it measures what ``query`` runs.

On a Euclid or Manhattan collection the dense side's raw score is a distance (lower is closer).
Linear fusion reads it as its ``similarity_score``, ``1 / (1 + d)`` in (0, 1]
(:func:`ragsonde.models.scores.summable_of`: a point the dense side did not find adds 0, farther
than any it found). Qdrant's own DBSF reads a distance as a similarity and puts the farthest
points first (qdrant/qdrant#10611, and qdrant-client's local mode alike), so a DBSF search of
such a collection is fused here too (:func:`fuse_dbsf`: Qdrant's formula on the negated
distances, :data:`ragsonde.models.scores.ORIENTATION`; DBSF's normalisation is affine, so
negating is exactly reversing the order); on Cosine and Dot collections Qdrant fuses DBSF
itself, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, TypeVar

from ragsonde.models.points import Hit, SearchSpec
from ragsonde.models.scores import Distance, is_distance, oriented_of, summable_of
from ragsonde.store._convert import point_id, to_fused_hit

__all__ = ["SearchPlan", "fuse_dbsf", "fuse_linear", "fused_here"]

Id = TypeVar("Id", bound=Hashable)


def _id_order(pid: Hashable) -> tuple[int, int, str]:
    """Ties' order: integer ids by value, then the others (UUIDs) by their text."""
    return (0, pid, "") if isinstance(pid, int) else (1, 0, str(pid))


def fuse_linear(
    dense: Sequence[tuple[Id, float]],
    sparse: Sequence[tuple[Id, float]],
    weights: Sequence[float],
    limit: int,
) -> list[tuple[Id, float]]:
    """The ``limit`` best points of ``w_dense * cosine + w_sparse * bm25 / max(bm25)``.

    ``dense`` and ``sparse``: each side's candidates as ``(id, raw score)``, ids as the engine
    gives them (ints, UUIDs or strings); ``weights``: ``(w_dense, w_sparse)``. Best first; equal
    scores by id (integers by value, others by text), so the result never depends on the
    engine's order of ties.
    """
    w_dense, w_sparse = float(weights[0]), float(weights[1])
    top = max((s for _, s in sparse), default=0.0)
    scale = w_sparse / top if top > 0.0 else 0.0
    fused: dict[Id, float] = {pid: w_dense * float(s) for pid, s in dense}
    for pid, s in sparse:
        fused[pid] = fused.get(pid, 0.0) + scale * float(s)
    return _best(fused, limit)


def _best(fused: Mapping[Id, float], limit: int) -> list[tuple[Id, float]]:
    """The ``limit`` best of ``fused``, best first, equal scores by id."""
    if limit <= 0:
        return []
    ranked = sorted(fused.items(), key=itemgetter(1), reverse=True)
    if len(ranked) > limit:  # order ties by id only where it matters: up to the cut's score
        cut = ranked[limit - 1][1]
        ranked = [item for item in ranked if item[1] >= cut]
    ranked.sort(key=lambda item: (-item[1], _id_order(item[0])))
    return ranked[:limit]


def _dbsf_normalised(side: Sequence[tuple[Id, float]]) -> list[tuple[Id, float]]:
    """One list's scores mapped by Qdrant's DBSF: ``(s − (μ − 3σ)) / 6σ`` with the sample
    standard deviation; 0.5 each when the list has one point or no spread."""
    n = len(side)
    mean = sum(s for _, s in side) / n if n else 0.0
    variance = sum((s - mean) ** 2 for _, s in side) / (n - 1) if n > 1 else 0.0
    if variance == 0.0:
        return [(pid, 0.5) for pid, _ in side]
    sd = variance**0.5
    return [(pid, (s - (mean - 3 * sd)) / (6 * sd)) for pid, s in side]


def fuse_dbsf(
    dense: Sequence[tuple[Id, float]], sparse: Sequence[tuple[Id, float]], limit: int
) -> list[tuple[Id, float]]:
    """The ``limit`` best points of Qdrant's distribution-based score fusion: each list's
    scores (higher is closer: a distance oriented first) normalised by :func:`_dbsf_normalised`
    and summed (a point one list lacks gets nothing from it). Best first; ties by id."""
    fused: dict[Id, float] = {}
    for side in (dense, sparse):
        for pid, s in _dbsf_normalised([(p, float(x)) for p, x in side]):
            fused[pid] = fused.get(pid, 0.0) + s
    return _best(fused, limit)


def fused_here(spec: SearchSpec, distance: Distance = Distance.COSINE) -> bool:
    """True when ragsonde fuses this search itself: a linear hybrid search, and a DBSF one of a
    collection whose dense score is a distance (Qdrant's DBSF reverses it: module docstring)."""
    if spec.mode != "hybrid":
        return False
    return spec.fusion == "linear" or (spec.fusion == "dbsf" and is_distance(distance))


#: A record as the engine reads it back (``id``, ``payload``, ``vector``).
Record = Any


@dataclass(frozen=True)
class SearchPlan:
    """A batch of searches as one batch of engine requests.

    A search Qdrant answers alone (dense, sparse, RRF, DBSF) is one request; a linear hybrid
    search is two (its dense and its BM25 candidates, without payloads), fused by
    :func:`fuse_linear`; the winners' payloads (and vectors) are then read in one call.
    """

    specs: tuple[SearchSpec, ...]
    requests: tuple[Any, ...]
    distance: Distance = Distance.COSINE
    """The dense vector's distance (how its raw scores are oriented before fusing)."""

    @classmethod
    def build(
        cls,
        specs: Sequence[SearchSpec],
        request: Callable[[SearchSpec], Any],
        sides: Callable[[SearchSpec], tuple[Any, Any]],
        distance: Distance = Distance.COSINE,
    ) -> SearchPlan:
        """``request``: the engine request of a search Qdrant answers; ``sides``: the dense and
        the BM25 candidate requests of one fused here."""
        requests: list[Any] = []
        for spec in specs:
            requests.extend(sides(spec) if fused_here(spec, distance) else (request(spec),))
        return cls(tuple(specs), tuple(requests), distance)

    def fuse(
        self,
        spec: SearchSpec,
        dense: Sequence[tuple[Any, float]],
        sparse: Sequence[tuple[Any, float]],
    ) -> list[tuple[str, float]]:
        """One search fused here, its dense side read higher-is-better (module docstring)."""
        if spec.fusion == "linear":
            weights = spec.fusion_weights or (0.0, 0.0)  # validated before: never None
            added = summable_of(self.distance)
            best = fuse_linear([(p, added(s)) for p, s in dense], sparse, weights, spec.limit)
        else:
            orient = oriented_of(self.distance)
            best = fuse_dbsf([(p, orient(s)) for p, s in dense], sparse, spec.limit)
        return [(str(pid), float(score)) for pid, score in best]

    def hits(
        self,
        responses: Sequence[Sequence[Any]],
        to_hit: Callable[[Any], Hit],
        fetch: Callable[[list[Any], bool], Iterable[Record]],
        vector_name: str | None,
    ) -> list[list[Hit]]:
        """One hit list per search from the engine's ``responses`` (one per request, in order).

        ``fetch(ids, with_vectors)``: the records of those ids (the engine's id types), read in
        one call. A point deleted between the search and the read is left out.
        """
        answers = iter(responses)
        fused: list[list[tuple[str, float]] | None] = []
        direct: list[list[Hit] | None] = []
        for spec in self.specs:
            if fused_here(spec, self.distance):
                dense = [(p.id, p.score) for p in next(answers)]
                sparse = [(p.id, p.score) for p in next(answers)]
                fused.append(self.fuse(spec, dense, sparse))
                direct.append(None)
            else:
                fused.append(None)
                direct.append([to_hit(p) for p in next(answers)])
        wanted = {pid for ranked in fused if ranked for pid, _ in ranked}
        records: Mapping[str, Record] = {}
        if wanted:
            vectors = any(s.with_vectors for s, r in zip(self.specs, fused, strict=True) if r)
            found = fetch([point_id(pid) for pid in sorted(wanted)], vectors)
            records = {str(r.id): r for r in found}
        out: list[list[Hit]] = []
        for spec, ranked, hits in zip(self.specs, fused, direct, strict=True):
            if hits is not None:
                out.append(hits)
                continue
            out.append(
                [
                    to_fused_hit(records[pid], score, vector_name, spec.with_vectors)
                    for pid, score in ranked or ()
                    if pid in records
                ]
            )
        return out
