"""Every Qdrant distance: the engine's order stands, and ``similarity_score`` maps its raw score
into [0, 1] as :mod:`ragsonde.models.scores` documents."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from ragsonde.models.points import PointRecord, SearchSpec
from ragsonde.models.scores import (
    ORIENTATION,
    SIMILARITY,
    Distance,
    is_distance,
    oriented_of,
    similarity_of,
)
from ragsonde.models.store import Store
from ragsonde.retriever import Retriever
from ragsonde.store import open_store
from tests.support import DOCS

DIM = 16
N = 120


def _unit_points(seed: int = 0) -> list[PointRecord]:
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(N, DIM))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    return [
        PointRecord(id=str(i + 1), vector=v.tolist(), payload={"text": f"p{i}"})
        for i, v in enumerate(vecs)
    ]


@pytest.fixture
def by_distance(store: Store):
    pts = _unit_points()
    for d in Distance:
        store.create_collection(d.value.lower(), DIM, distance=d)
        store.upsert(d.value.lower(), pts)
    return store


def test_collection_info_carries_the_distance(by_distance):
    for d in Distance:
        assert by_distance.collection_info(d.value.lower()).distance is d


def test_dot_euclid_manhattan_on_unit_vectors_rank_as_cosine_does(by_distance):
    """Dot and Euclid are monotone in cosine on unit vectors: the same ids in the same order.
    Manhattan is not (it is another metric), so it is checked against its own exact order."""
    rng = np.random.default_rng(5)
    pts = _unit_points()
    mat = np.array([p.vector for p in pts])
    for _ in range(5):
        q = rng.normal(size=DIM)
        q /= np.linalg.norm(q)
        spec = [SearchSpec(vector=q.tolist(), limit=10, exact=True)]
        cosine = by_distance.search("cosine", spec)[0]
        dot = by_distance.search("dot", spec)[0]
        euclid = by_distance.search("euclid", spec)[0]
        manhattan = by_distance.search("manhattan", spec)[0]
        ids = [h.id for h in cosine]
        assert [h.id for h in dot] == ids
        assert [h.id for h in euclid] == ids
        # raw scores are the engine's own: similarity for cosine/dot, distance for euclid
        assert [h.score for h in dot] == pytest.approx([h.score for h in cosine], abs=1e-4)
        expected_l2 = [math.sqrt(max(0.0, 2 - 2 * h.score)) for h in cosine]
        assert [h.score for h in euclid] == pytest.approx(expected_l2, abs=1e-3)
        l1 = np.abs(mat - q).sum(axis=1)
        assert [h.id for h in manhattan] == [pts[i].id for i in np.argsort(l1)[:10]]
        assert [h.score for h in manhattan] == sorted(h.score for h in manhattan)


@pytest.mark.parametrize(
    ("distance", "raw", "expected"),
    [
        ("Cosine", 0.8, 0.8),
        ("Cosine", -0.3, 0.0),
        ("Dot", 1.7, 1.0),
        ("Dot", 0.25, 0.25),
        ("Euclid", 0.0, 1.0),
        ("Euclid", 1.0, 0.5),
        ("Euclid", 3.0, 0.25),
        ("Manhattan", 4.0, 0.2),
    ],
)
def test_similarity_maps_by_hand(distance, raw, expected):
    assert similarity_of(distance)(raw) == pytest.approx(expected)


@pytest.mark.parametrize("distance", ["Euclid", "Manhattan"])
def test_distance_maps_are_strictly_decreasing_in_the_distance(distance):
    f = similarity_of(distance)
    values = [f(d) for d in np.linspace(0, 50, 200)]
    assert all(a > b for a, b in itertools.pairwise(values))
    assert all(0.0 < v <= 1.0 for v in values)


@pytest.mark.slow
@pytest.mark.parametrize("distance", [Distance.EUCLID, Distance.MANHATTAN, Distance.DOT])
def test_retriever_on_a_distance_collection(store_settings, embedder, distance):
    """With the real model: the right chunk first, scores in [0, 1] falling down the list, the
    engine's raw score kept, and a threshold on similarity_score as documented."""
    store = open_store(store_settings)
    store.create_collection("docs", embedder.dimension, distance=distance)
    vecs = embedder.embed_documents([d[2] for d in DOCS])
    store.upsert(
        "docs",
        [
            PointRecord(id=str(i + 1), vector=vecs[i].tolist(), payload={"text": d[2], "doc": d[0]})
            for i, d in enumerate(DOCS)
        ],
    )
    to_similarity = similarity_of(distance)
    with Retriever(store_settings, store=store, embedder=embedder) as r:
        resp = r.retrieve({"query_text": "how does lidar measure distance?", "top_k": 8})
        assert resp.status == "success", resp.error
        assert resp.results[0].metadata["doc"] == "lidar"
        sims = [x.similarity_score for x in resp.results]
        assert sims == sorted(sims, reverse=True)
        for x in resp.results:
            assert x.raw_score is not None
            assert x.similarity_score == pytest.approx(to_similarity(x.raw_score))
        cut = sims[2]
        kept = r.retrieve(
            {"query_text": "how does lidar measure distance?", "top_k": 8, "score_threshold": cut}
        )
        assert [x.chunk_id for x in kept.results] == [x.chunk_id for x in resp.results[:3]]
    store.close()


def test_every_distance_has_one_orientation_for_the_signals():
    """The registry covers every distance; Cosine and Dot scores are kept as they are (the
    signals of a Cosine collection are unchanged), a distance is negated (lower is closer)."""
    assert set(ORIENTATION) == set(Distance) == set(SIMILARITY)
    for d in (Distance.COSINE, Distance.DOT):
        assert [oriented_of(d)(s) for s in (-0.4, 0.0, 0.7, 3.5)] == [-0.4, 0.0, 0.7, 3.5]
        assert not is_distance(d)
    for d in (Distance.EUCLID, Distance.MANHATTAN):
        f = oriented_of(d.value)
        assert is_distance(d.value)
        assert [f(s) for s in (0.0, 0.5, 2.0)] == [0.0, -0.5, -2.0]
        # higher is closer, and a gap between two distances is kept as it was
        assert f(0.5) > f(2.0) and f(0.5) - f(2.0) == pytest.approx(1.5)


@pytest.mark.slow
@pytest.mark.parametrize("distance", [Distance.EUCLID, Distance.MANHATTAN])
@pytest.mark.parametrize(
    ("fusion", "weights"), [("dbsf", None), ("linear", (0.7, 0.3))], ids=["dbsf", "linear"]
)
def test_hybrid_fusion_reads_a_distance_as_lower_is_closer(
    store_settings, embedder, distance, fusion, weights
):
    """The same texts as Cosine and as a distance, dense and BM25: a hybrid search puts the
    same document first on both, the engine's dense order kept inside the fusion. Qdrant's own
    DBSF (and ragsonde's linear fusion before) read a distance as a similarity and put the
    farthest document first (qdrant/qdrant#10611)."""
    from ragsonde.embedders.sparse import SPARSE_VECTOR_NAME, Bm25Encoder
    from ragsonde.models.params import SearchParams

    store = open_store(store_settings)
    texts = [d[2] for d in DOCS]
    vecs = embedder.embed_documents(texts)
    bm25 = Bm25Encoder()
    sparse = bm25.embed_documents(texts)
    points = [
        PointRecord(str(i + 1), vecs[i].tolist(), {"text": t, "doc": d[0]}, sparse[i])
        for i, (d, t) in enumerate(zip(DOCS, texts, strict=True))
    ]
    for d in (Distance.COSINE, distance):
        store.create_collection(
            d.value.lower(), embedder.dimension, sparse_vector_name=SPARSE_VECTOR_NAME, distance=d
        )
        store.upsert(d.value.lower(), points)
    params = SearchParams(mode="hybrid", fusion=fusion, fusion_weights=weights, top_k=3)
    questions = [
        "how does lidar measure distance?",
        "why does the heading drift?",
        "how low can a lipo battery go?",
        "how does a robot map an unknown place?",
    ]
    for q, v, s in zip(
        questions, embedder.embed_queries(questions), bm25.embed_queries(questions), strict=True
    ):
        spec = [SearchSpec.of(params, vector=v.tolist(), sparse=s)]
        cosine = store.search("cosine", spec)[0]
        other = store.search(distance.value.lower(), spec)[0]
        assert other[0].payload["doc"] == cosine[0].payload["doc"], q
        assert store.ranked(distance.value.lower(), spec)[0][0] == tuple(h.id for h in other)
    store.close()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sparse", "hybrid"])
def test_bm25_and_fused_scores_are_clamped_on_a_distance_collection(store_settings, embedder, mode):
    """A BM25 or fused score is higher-is-better on every distance: ``similarity_score`` is its
    clamp, best first, and a threshold keeps the best. Read as a distance (``1 / (1 + s)``),
    the best result scored lowest and a threshold cut it first."""
    from ragsonde.embedders.sparse import SPARSE_VECTOR_NAME, Bm25Encoder

    store = open_store(store_settings)
    store.create_collection(
        "docs", embedder.dimension, sparse_vector_name=SPARSE_VECTOR_NAME, distance=Distance.EUCLID
    )
    texts = [d[2] for d in DOCS]
    vecs = embedder.embed_documents(texts)
    sparse = Bm25Encoder().embed_documents(texts)
    store.upsert(
        "docs",
        [
            PointRecord(str(i + 1), vecs[i].tolist(), {"text": t, "doc": d[0]}, sparse[i])
            for i, (d, t) in enumerate(zip(DOCS, texts, strict=True))
        ],
    )
    question = {"query_text": "how does lidar measure distance with laser pulses?", "top_k": 4}
    with Retriever(store_settings, store=store, embedder=embedder) as r:
        resp = r.retrieve({**question, "mode": mode})
        assert resp.status == "success", resp.error
        assert resp.results[0].metadata["doc"] == "lidar"
        sims = [x.similarity_score for x in resp.results]
        assert sims == sorted(sims, reverse=True)
        for x in resp.results:
            assert x.raw_score is not None
            assert x.similarity_score == pytest.approx(min(1.0, max(0.0, x.raw_score)))
        kept = r.retrieve({**question, "mode": mode, "score_threshold": sims[0]})
        assert kept.results and kept.results[0].chunk_id == resp.results[0].chunk_id
    store.close()
