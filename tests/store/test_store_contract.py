"""One suite, both stores: embedded Qdrant Edge and qdrant-client (local mode via :memory:)."""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from ragsonde.errors import CollectionNotFoundError, QueryValidationError, RagsondeError
from ragsonde.models.points import PointRecord, SearchSpec
from ragsonde.models.store import Store

DIM = 16
INDEXED = {"url": "keyword", "section": "keyword", "doc_id": "keyword"}


def _points(n: int, seed: int = 0) -> list[PointRecord]:
    rng = np.random.default_rng(seed)
    vecs = rng.normal(size=(n, DIM)).astype(np.float32)
    return [
        PointRecord(
            id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"doc-{i}")),
            vector=vecs[i].tolist(),
            payload={
                "text": f"chunk {i}",
                "url": f"https://x/{i % 3}",
                "section": f"s{i % 2}",
                "doc_id": f"d{i}",
                "chunk_index": i,
            },
        )
        for i in range(n)
    ]


@pytest.fixture
def filled(store: Store):
    store.create_collection("docs", DIM, indexed_fields=INDEXED)
    pts = _points(60)
    store.upsert("docs", pts)
    store.build_index("docs")
    return store, pts


def _exact_top(pts, query, k, keep=lambda p: True):
    mat = np.array([p.vector for p in pts], dtype=np.float64)
    q = np.asarray(query, dtype=np.float64)
    sims = mat @ q / (np.linalg.norm(mat, axis=1) * np.linalg.norm(q))
    order = [i for i in np.argsort(-sims) if keep(pts[i])]
    return [pts[i].id for i in order[:k]], [float(sims[i]) for i in order[:k]]


def test_info_after_create(filled):
    store, pts = filled
    info = store.collection_info("docs")
    assert info.dimension == DIM
    assert info.distance.lower() == "cosine"
    assert info.points_count == len(pts)
    assert set(INDEXED) <= set(info.indexed_fields)
    assert "docs" in store.list_collections()


def test_search_matches_exact_cosine(filled):
    store, pts = filled
    query = np.random.default_rng(7).normal(size=DIM).tolist()
    ids, scores = _exact_top(pts, query, 5)
    hits = store.search("docs", [SearchSpec(vector=query, limit=5)])[0]
    assert [h.id for h in hits] == ids
    assert [h.score for h in hits] == pytest.approx(scores, abs=1e-4)
    assert hits[0].payload["text"].startswith("chunk ")


def test_batch_search_is_one_list_per_spec_in_order(filled):
    store, pts = filled
    rng = np.random.default_rng(3)
    queries = [rng.normal(size=DIM).tolist() for _ in range(4)]
    out = store.search("docs", [SearchSpec(vector=q, limit=3) for q in queries])
    assert len(out) == 4
    for q, hits in zip(queries, out, strict=True):
        assert [h.id for h in hits] == _exact_top(pts, q, 3)[0]


@pytest.mark.parametrize(
    ("flt", "keep"),
    [
        ({"url": ["https://x/1"]}, lambda p: p.payload["url"] == "https://x/1"),
        ({"url": ["https://x/0", "https://x/2"]}, lambda p: p.payload["url"] != "https://x/1"),
        (
            {"url": ["https://x/0"], "section": ["s1"]},
            lambda p: p.payload["url"] == "https://x/0" and p.payload["section"] == "s1",
        ),
        # text and integers at once (an id a payload may keep either way): any of them
        ({"doc_id": ["d1", 7, "d4"]}, lambda p: p.payload["doc_id"] in {"d1", "d4"}),
        ({"chunk_index": [2, "2", 5]}, lambda p: p.payload["chunk_index"] in {2, 5}),
    ],
)
def test_filters_any_of_within_and_across_fields(filled, flt, keep):
    store, pts = filled
    query = np.random.default_rng(11).normal(size=DIM).tolist()
    hits = store.search("docs", [SearchSpec(vector=query, limit=6, filter=flt)])[0]
    assert hits
    assert all(keep(next(p for p in pts if p.id == h.id)) for h in hits)
    assert [h.id for h in hits] == _exact_top(pts, query, 6, keep)[0]
    assert store.count("docs", flt) == sum(keep(p) for p in pts)


def test_exact_and_vectors(filled):
    store, pts = filled
    query = pts[5].vector
    hit = store.search("docs", [SearchSpec(vector=query, limit=1, exact=True, with_vectors=True)])[
        0
    ][0]
    assert hit.id == pts[5].id
    assert hit.score == pytest.approx(1.0, abs=1e-5)
    assert hit.vector is not None and len(hit.vector) == DIM


def test_retrieve_scroll_delete(filled):
    store, pts = filled
    got = store.retrieve("docs", [pts[0].id, pts[1].id, str(uuid.uuid4())])
    assert {r.id for r in got} == {pts[0].id, pts[1].id}
    assert got[0].payload["text"].startswith("chunk ")
    seen = [r.id for batch in store.scroll("docs", batch_size=16) for r in batch]
    assert sorted(seen) == sorted(p.id for p in pts)
    store.delete_points("docs", [pts[0].id])
    assert store.count("docs") == len(pts) - 1
    assert store.retrieve("docs", [pts[0].id]) == []


def test_upsert_same_id_replaces(filled):
    store, pts = filled
    p = pts[3]
    store.upsert(
        "docs", [PointRecord(id=p.id, vector=p.vector, payload={**p.payload, "text": "new"})]
    )
    assert store.count("docs") == len(pts)
    assert store.retrieve("docs", [p.id])[0].payload["text"] == "new"


def test_integer_ids_from_other_pipelines(store):
    store.create_collection("ints", 4)
    store.upsert("ints", [PointRecord(id="42", vector=[1, 0, 0, 0], payload={"text": "a"})])
    hit = store.search("ints", [SearchSpec(vector=[1, 0, 0, 0], limit=1)])[0][0]
    assert hit.id == "42"


def test_missing_collection(store):
    for call in (
        lambda: store.collection_info("nope"),
        lambda: store.search("nope", [SearchSpec(vector=[0.0] * DIM, limit=1)]),
        lambda: store.count("nope"),
    ):
        with pytest.raises(CollectionNotFoundError, match="nope"):
            call()


def test_dense_only_collection_rejects_sparse_mode(filled):
    store, _ = filled
    with pytest.raises(QueryValidationError, match="dense"):
        store.search("docs", [SearchSpec(vector=[0.1] * DIM, limit=1, mode="hybrid")])


def test_delete_collection(filled):
    store, _ = filled
    store.delete_collection("docs")
    assert "docs" not in store.list_collections()
    with pytest.raises(CollectionNotFoundError):
        store.collection_info("docs")


def test_wrong_vector_size_is_a_ragsonde_error(filled):
    store, _ = filled
    with pytest.raises(RagsondeError):
        store.search("docs", [SearchSpec(vector=[0.1, 0.2], limit=1)])
