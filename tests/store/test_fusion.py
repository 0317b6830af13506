"""``fuse_linear``: the TM2C2 convex combination, computed by hand on small lists; ``fuse_dbsf``
against qdrant-client's own DBSF."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import pytest

from ragsonde.store._fusion import fuse_dbsf, fuse_linear


def same(got: Sequence[tuple[object, float]], want: Sequence[tuple[object, float]]) -> bool:
    """Same ids in the same order, scores equal to rounding."""
    return [p for p, _ in got] == [p for p, _ in want] and [s for _, s in got] == pytest.approx(
        [s for _, s in want]
    )


def test_cosine_as_is_and_bm25_over_the_lists_maximum() -> None:
    dense = [("a", 0.9), ("b", 0.5), ("c", -0.2)]
    sparse = [("b", 20.0), ("d", 10.0), ("a", 5.0)]
    fused = fuse_linear(dense, sparse, (0.7, 0.3), 10)
    # a: 0.63 + 0.3 * 5/20; b: 0.35 + 0.3; d: 0.3 * 10/20; c: 0.7 * -0.2 (no BM25 match)
    assert [pid for pid, _ in fused] == ["a", "b", "d", "c"]
    assert dict(fused) == pytest.approx({"a": 0.705, "b": 0.65, "d": 0.15, "c": -0.14})


def test_limit_keeps_the_best() -> None:
    dense = [("a", 0.9), ("b", 0.5)]
    sparse = [("c", 3.0), ("b", 1.0)]
    assert same(fuse_linear(dense, sparse, (0.5, 0.5), 2), [("c", 0.5), ("a", 0.45)])
    assert fuse_linear(dense, sparse, (0.5, 0.5), 0) == []


def test_ties_break_by_ascending_id_whatever_the_input_order() -> None:
    dense = [("z", 0.5), ("m", 0.5), ("a", 0.25)]
    sparse = [("a", 2.0), ("q", 1.0)]
    # a: 0.125 + 0.5; z, m (0.5 * 0.5, no BM25) and q (0.5 * 1/2) tie at 0.25
    fused = fuse_linear(dense, sparse, (0.5, 0.5), 10)
    assert [pid for pid, _ in fused] == ["a", "m", "q", "z"]
    assert fused == fuse_linear(list(reversed(dense)), list(reversed(sparse)), (0.5, 0.5), 10)
    # integer ids by value; at the cut, the tie goes to the lower id
    assert fuse_linear([(10, 0.1), (9, 0.1)], [], (1.0, 1.0), 2) == [(9, 0.1), (10, 0.1)]
    assert fuse_linear([(7, 0.5), (12, 0.2), (3, 0.2), (5, 0.1)], [], (1.0, 0.0), 2) == [
        (7, 0.5),
        (3, 0.2),
    ]
    uuids = [(uuid.UUID(int=n), 0.3) for n in (9, 2, 5)]
    assert [p for p, _ in fuse_linear(uuids, [], (1.0, 0.0), 2)] == [
        uuid.UUID(int=2),
        uuid.UUID(int=5),
    ]


def test_empty_or_zero_sparse_list_adds_nothing() -> None:
    dense = [("a", 0.8), ("b", 0.6)]
    want = [("a", 0.4), ("b", 0.3)]
    assert same(fuse_linear(dense, [], (0.5, 0.5), 5), want)
    # every BM25 score 0: no maximum to divide by, the sparse part is 0 (not a division error)
    zero = fuse_linear(dense, [("b", 0.0), ("c", 0.0)], (0.5, 0.5), 5)
    assert same(zero, [*want, ("c", 0.0)])
    assert fuse_linear([], [], (0.5, 0.5), 5) == []


def test_empty_dense_list_ranks_by_bm25_alone() -> None:
    fused = fuse_linear([], [("x", 4.0), ("y", 8.0)], (0.9, 0.1), 5)
    assert same(fused, [("y", 0.1), ("x", 0.05)])


def test_weights_move_the_order_toward_their_side() -> None:
    dense = [("d", 0.9), ("s", 0.1)]
    sparse = [("s", 30.0), ("d", 3.0)]
    assert fuse_linear(dense, sparse, (0.8, 0.2), 2)[0][0] == "d"
    assert fuse_linear(dense, sparse, (0.2, 0.8), 2)[0][0] == "s"


def test_dbsf_is_qdrant_clients_own_formula() -> None:
    """``fuse_dbsf`` against qdrant-client's local-mode DBSF (an independent implementation),
    on similarity lists where Qdrant's reading is right: the same points, order and scores."""
    from qdrant_client import models
    from qdrant_client.hybrid.fusion import distribution_based_score_fusion

    dense = [("a", 0.91), ("b", 0.74), ("c", 0.70), ("d", 0.31)]
    sparse = [("c", 12.5), ("e", 9.0), ("a", 4.0)]
    lists = [
        [models.ScoredPoint(id=i, version=0, score=s) for i, s in side] for side in (dense, sparse)
    ]
    theirs = distribution_based_score_fusion(lists, limit=10)
    ours = fuse_dbsf(dense, sparse, 10)
    assert [p for p, _ in ours] == [p.id for p in theirs]
    assert [s for _, s in ours] == pytest.approx([p.score for p in theirs])
    # one point, or no spread: 0.5 each (as Qdrant)
    assert fuse_dbsf([("a", 0.3)], [("a", 2.0), ("b", 2.0)], 5) == [("a", 1.0), ("b", 0.5)]


def test_dbsf_of_negated_distances_reverses_the_distance_order() -> None:
    """Distances read as similarities put the farthest first (Qdrant's bug); negated, the
    nearest comes first and the normalised scores are those of the mirrored list."""
    near_first = [("a", 0.2), ("b", 0.5), ("c", 1.3)]
    assert [p for p, _ in fuse_dbsf(near_first, [], 3)] == ["c", "b", "a"]  # as Qdrant's
    fused = fuse_dbsf([(p, -d) for p, d in near_first], [], 3)
    assert [p for p, _ in fused] == ["a", "b", "c"]
    mirrored = fuse_dbsf(near_first, [], 3)
    assert dict(fused) == pytest.approx({p: 1.0 - s for p, s in mirrored})


def test_only_a_distance_collections_dbsf_is_fused_here() -> None:
    """Qdrant keeps fusing DBSF and RRF on Cosine and Dot (their figures unchanged); a DBSF
    search of a Euclid or Manhattan collection and every linear one are fused by ragsonde."""
    from ragsonde.models.params import SearchParams
    from ragsonde.models.points import SearchSpec
    from ragsonde.models.scores import Distance
    from ragsonde.store._fusion import fused_here

    def spec(**kw: object) -> SearchSpec:
        return SearchSpec.of(SearchParams(mode="hybrid", **kw), vector=[0.0])

    for d in Distance:
        far = d in (Distance.EUCLID, Distance.MANHATTAN)
        assert fused_here(spec(fusion="dbsf"), d) is far
        assert fused_here(spec(fusion="rrf"), d) is False
        assert fused_here(spec(fusion="linear", fusion_weights=(0.7, 0.3)), d) is True
        assert fused_here(SearchSpec.of(SearchParams(), vector=[0.0]), d) is False
