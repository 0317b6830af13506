"""``fusion = "linear"`` through each store's own search (the embedded engine, and qdrant-client's
local mode): ``w_dense * cosine + w_sparse * bm25 / max_bm25``, fused by ragsonde from the two
sides' candidate lists. Every expected score is computed here from the two sides' own raw
scores, obtained by separate dense and sparse searches."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ragsonde.config import Settings
from ragsonde.models.points import FilterSpec, PointRecord, SearchSpec, SparseVector
from ragsonde.models.store import Store
from ragsonde.store import open_store

N = 60
QUERY = [1.0, 0.2, 0.0, -0.3]
QUERY_TERMS = SparseVector([1, 4], [1.0, 2.0])


@pytest.fixture(params=["edge", "qdrant-local"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """``h``: 60 points, 4-d and BM25-like sparse over 6 terms, ``parity`` in the payload.
    Point 0 (even) has the query terms far above the rest; point 1 (odd) is the query's own
    direction and has no query term; every third point matches no query term."""
    url = ":memory:" if request.param == "qdrant-local" else None
    s = open_store(Settings(home=tmp_path, qdrant_url=url))
    s.create_collection("h", 4, sparse_vector_name="bm25")
    rng = np.random.default_rng(11)
    points = []
    for i in range(N):
        vector = rng.normal(size=4).tolist() if i != 1 else list(QUERY)
        terms = [0, 2, 5] if i % 3 == 1 else sorted(rng.choice(6, size=3, replace=False).tolist())
        weights = [float(rng.uniform(0.5, 3.0)) for _ in terms]
        if i == 0:
            terms, weights = [1, 4], [9.0, 9.0]
        payload = {"parity": "even" if i % 2 == 0 else "odd", "n": i}
        points.append(PointRecord(str(i), vector, payload, SparseVector(terms, weights)))
    s.upsert("h", points)
    try:
        yield s
    finally:
        s.close()


def spec(mode: str = "hybrid", limit: int = N, **knobs: object) -> SearchSpec:
    return SearchSpec(vector=QUERY, sparse=QUERY_TERMS, limit=limit, mode=mode, **knobs)  # type: ignore[arg-type]


def side(
    store: Store, mode: str, limit: int = N, flt: FilterSpec | None = None
) -> dict[str, float]:
    """One side alone, best first: its raw scores by id."""
    return {h.id: h.score for h in store.search("h", [spec(mode, limit, filter=flt)])[0]}


def linear(store: Store, weights: tuple[float, float], **knobs: object) -> list[tuple[str, float]]:
    knobs = {"limit": N, "prefetch_limit": N, **knobs}
    hits = store.search("h", [spec(fusion="linear", fusion_weights=weights, **knobs)])[0]
    return [(h.id, h.score) for h in hits]


def expected(
    dense: dict[str, float], sparse: dict[str, float], w: tuple[float, float]
) -> dict[str, float]:
    top = max(sparse.values(), default=0.0)
    return {
        i: w[0] * dense.get(i, 0.0) + (w[1] * sparse.get(i, 0.0) / top if top > 0 else 0.0)
        for i in dense.keys() | sparse.keys()
    }


def assert_fused(got: list[tuple[str, float]], want: dict[str, float], limit: int) -> None:
    scores = [s for _, s in got]
    assert scores == sorted(scores, reverse=True)
    assert len(got) == min(limit, len(want))
    assert dict(got) == pytest.approx({pid: want[pid] for pid, _ in got})
    # the best of all candidates, none left out
    assert min(scores) >= max((s for p, s in want.items() if p not in dict(got)), default=-9.0)


def test_scores_are_cosine_plus_bm25_over_the_lists_maximum(store: Store) -> None:
    dense, sparse = side(store, "dense"), side(store, "sparse")
    assert len(dense) == N and 0 < len(sparse) < N  # some points match no query term
    for w in ((1.0, 0.0), (0.0, 1.0), (0.5, 0.5), (0.7, 0.3), (0.3, 0.7)):
        assert_fused(linear(store, w), expected(dense, sparse, w), N)
    # all weight on one side ranks as that side alone; the BM25 best scores exactly w_sparse
    assert [p for p, _ in linear(store, (1.0, 0.0))][:10] == list(dense)[:10]
    sparse_only = linear(store, (0.0, 1.0))
    assert [p for p, _ in sparse_only][: len(sparse)] == list(sparse)
    assert sparse_only[0] == ("0", pytest.approx(1.0))


def test_weights_move_the_ranking_toward_their_side(store: Store) -> None:
    dense, sparse = side(store, "dense"), side(store, "sparse")
    cosine_sums, bm25_sums = [], []
    for w_dense in (0.1, 0.3, 0.5, 0.7, 0.9):
        top = [p for p, _ in linear(store, (w_dense, 1.0 - w_dense), limit=10)]
        cosine_sums.append(sum(dense[p] for p in top))
        bm25_sums.append(sum(sparse.get(p, 0.0) for p in top))
    # more dense weight: a top ten closer to the query vector, with fewer of its terms
    assert cosine_sums == sorted(cosine_sums) and cosine_sums[0] < cosine_sums[-1]
    assert bm25_sums == sorted(bm25_sums, reverse=True) and bm25_sums[0] > bm25_sums[-1]
    assert linear(store, (0.9, 0.1))[0][0] == "1" and linear(store, (0.1, 0.9))[0][0] == "0"


def test_prefetch_limit_bounds_the_candidates_and_a_missing_side_scores_zero(
    store: Store,
) -> None:
    dense, sparse = side(store, "dense", limit=3), side(store, "sparse", limit=3)
    fused = linear(store, (0.6, 0.4), prefetch_limit=3, limit=10)
    # three candidates per side; a point the other side did not fetch gets 0 there
    assert {p for p, _ in fused} == dense.keys() | sparse.keys() and len(fused) <= 6
    assert_fused(fused, expected(dense, sparse, (0.6, 0.4)), 10)
    assert dict(fused)["1"] == pytest.approx(0.6 * dense["1"])  # no query term
    assert dict(fused)["0"] == pytest.approx(0.6 * dense.get("0", 0.0) + 0.4)


def test_the_filter_applies_to_both_sides_before_the_maximum(store: Store) -> None:
    odd: FilterSpec = {"parity": ["odd"]}
    dense, sparse = side(store, "dense", flt=odd), side(store, "sparse", flt=odd)
    assert max(sparse.values()) < side(store, "sparse")["0"]  # point 0 is even
    fused = linear(store, (0.5, 0.5), filter=odd)
    assert fused and all(int(p) % 2 == 1 for p, _ in fused)
    assert_fused(fused, expected(dense, sparse, (0.5, 0.5)), N)
    assert max(s for _, s in fused) <= 0.5 * max(dense.values()) + 0.5 + 1e-6


def test_payloads_and_vectors_of_the_fused_hits(store: Store) -> None:
    stored = {h.id: h.vector for h in store.search("h", [spec("dense", with_vectors=True)])[0]}
    plain = store.search("h", [spec(fusion="linear", fusion_weights=(0.7, 0.3), limit=5)])[0]
    full = store.search(
        "h", [spec(fusion="linear", fusion_weights=(0.7, 0.3), limit=5, with_vectors=True)]
    )[0]
    assert [h.id for h in plain] == [h.id for h in full] and len(plain) == 5
    for p, f in zip(plain, full, strict=True):
        assert p.vector is None and p.payload == f.payload == {
            "parity": p.payload["parity"],
            "n": int(p.id),
        }
        assert f.vector == pytest.approx(stored[f.id])


def test_a_batch_mixes_fusions_as_if_each_ran_alone(store: Store) -> None:
    specs = [
        spec(fusion="linear", fusion_weights=(0.7, 0.3), limit=8),
        spec(fusion="dbsf", limit=8),
        spec("dense", limit=4),
        spec(fusion="linear", fusion_weights=(0.2, 0.8), limit=6, prefetch_limit=10),
        spec("sparse", limit=3),
    ]
    together = store.search("h", specs)
    alone = [store.search("h", [s])[0] for s in specs]
    assert [[(h.id, h.score) for h in hits] for hits in together] == [
        [(h.id, h.score) for h in hits] for hits in alone
    ]
    assert [len(hits) for hits in together] == [8, 8, 4, 6, 3]
    assert [h.id for h in together[0]] != [h.id for h in together[3]]
