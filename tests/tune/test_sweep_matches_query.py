"""The tune sweep measures what ``query`` runs: a variant's hybrid search (``IndexVariant.hybrid``)
and the embedded store's search of the same shard, with the same settings, return the same ids
and scores, for every fusion (RRF and DBSF inside Qdrant, ``linear`` fused by ragsonde)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ragsonde.config import Settings
from ragsonde.models.params import SearchParams
from ragsonde.models.points import PointRecord, SearchSpec, SparseVector
from ragsonde.models.scores import Distance
from ragsonde.store import open_store
from ragsonde.tune.grid import hybrid
from ragsonde.tune.variants import SourcePoints, VariantBuilder, VariantSpec
from tests.tune.support import clustered

TERMS = 40


def _sparse(rng: np.random.Generator, n_terms: int) -> SparseVector:
    terms = sorted(rng.choice(TERMS, size=n_terms, replace=False).tolist())
    return SparseVector(terms, [float(v) for v in rng.uniform(0.2, 3.0, size=n_terms)])


def _above_last(hits: list[tuple[str, float]]) -> set[str]:
    last = hits[-1][1]
    return {p for p, s in hits if s > last + 1e-9}


@pytest.mark.parametrize(
    "fusion",
    [
        hybrid("dbsf", prefetch=40),
        hybrid("rrf", prefetch=40, rrf_k=60, fusion_weights=(2.0, 1.0)),
        hybrid("linear", prefetch=40, fusion_weights=(0.7, 0.3)),
        hybrid("linear", prefetch=300, fusion_weights=(0.3, 0.7)),
    ],
    ids=lambda f: f.fusion_label,
)
@pytest.mark.parametrize("distance", [Distance.COSINE, Distance.MANHATTAN])
def test_sweep_and_query_agree(fusion: SearchParams, distance: Distance, tmp_path: Path) -> None:
    """On a Manhattan collection too: the variant is built with the source's distance (it was
    built as Cosine whatever the source), and fused as the store fuses a distance."""
    rng = np.random.default_rng(5)
    x = clustered(n=300, dim=16)
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    store.create_collection("src", 16, sparse_vector_name="bm25", distance=distance)
    store.upsert(
        "src",
        [PointRecord(str(i), r.tolist(), {}, _sparse(rng, 5)) for i, r in enumerate(x)],
    )
    source = SourcePoints.read(store, "src")
    assert source.distance is distance
    queries = clustered(n=12, dim=16, seed=42)
    lexical = [_sparse(rng, 3) for _ in queries]
    search = fusion.overlay({"hnsw_ef": 32})
    # the variant is written straight into the store's home, so both search one shard
    variant = VariantBuilder(source, tmp_path).build(
        VariantSpec(), path=home / "collections" / "tuned"
    )
    try:
        swept, times = variant.hybrid(
            queries, lexical, SearchSpec.of(search, vector=None, limit=10)
        )
    finally:
        variant._shard.release()  # keep the folder: the store opens it as a collection
    assert len(times) == len(queries) and all(t > 0 for t in times)
    try:
        assert store.collection_info("tuned").distance is distance
        specs = [
            SearchSpec.of(search, vector=q.tolist(), sparse=sv, limit=10)
            for q, sv in zip(queries, lexical, strict=True)
        ]
        queried = [[(h.id, h.score) for h in hits] for hits in store.search("tuned", specs)]
    finally:
        store.close()
    assert all(len(hits) == 10 for hits in swept)
    for got, want in zip(queried, swept, strict=True):
        assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)
        if fusion.fusion == "rrf":
            # RRF ties often (equal rank sums) and the engine orders ties as it finds them:
            # the same ids above the last score, and the same scores
            assert _above_last(got) == _above_last(want)
        else:  # linear breaks ties by id
            assert [p for p, _ in got] == [p for p, _ in want]
    if fusion.fusion == "linear":
        # the fused scores: w_dense * cosine (or 1/(1+d)) plus at most w_sparse (BM25's best)
        w_dense, w_sparse = fusion.fusion_weights or (0.0, 0.0)
        tops = [hits[0][1] for hits in swept]
        assert all(-w_dense - 1e-6 <= t <= w_dense + w_sparse + 1e-6 for t in tops)


def test_a_distance_variants_dense_hits_are_the_scores_a_sum_adds(tmp_path: Path) -> None:
    """Tune sums chunk scores (``aggregation = sum``) as the evaluation does: on a Manhattan
    collection each hit's score is 1/(1+d) of the engine's distance, best first, so a document
    with more near chunks sums higher (raw distances summed ranked the farthest first)."""
    x = clustered(n=200, dim=16)
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    store.create_collection("src", 16, distance=Distance.MANHATTAN)
    store.upsert("src", [PointRecord(str(i), r.tolist(), {}) for i, r in enumerate(x)])
    source = SourcePoints.read(store, "src")
    queries = clustered(n=5, dim=16, seed=42)
    variant = VariantBuilder(source, tmp_path).build(
        VariantSpec(), path=home / "collections" / "tuned"
    )
    try:
        swept, _ = variant.search(queries, SearchSpec(vector=None, limit=10, exact=True))
    finally:
        variant._shard.release()
    try:
        raw = store.search(
            "tuned", [SearchSpec(vector=q.tolist(), limit=10, exact=True) for q in queries]
        )
    finally:
        store.close()
    for got, hits in zip(swept, raw, strict=True):
        assert [p for p, _ in got] == [h.id for h in hits]
        assert [s for _, s in got] == pytest.approx([1 / (1 + h.score) for h in hits])
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
