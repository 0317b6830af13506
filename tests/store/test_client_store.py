"""The qdrant-client store's per-query path: the collection's layout read once and kept, and a
single search sent through ``query_points`` (no ``query_batch_points`` deep copy).

Another program changing the collection is played by a second user of the same local-mode
client (as LangChain or LlamaIndex would share it): a local-mode folder admits one client only.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from qdrant_client import QdrantClient
from qdrant_client import models as m

from ragsonde.errors import CollectionNotFoundError, ErrorCode, QueryValidationError
from ragsonde.models.points import Hit, PointRecord, SearchSpec, SparseVector
from ragsonde.store.client import QdrantClientStore

N = 40


def vectors(dim: int, seed: int) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    return [[float(x) for x in row] for row in rng.normal(size=(N, dim))]


def terms(i: int) -> SparseVector:
    return SparseVector([i % 5, 5 + i % 3], [1.0 + i % 4, 0.5 + i % 2])


@pytest.fixture
def store() -> Iterator[QdrantClientStore]:
    """``c``: 40 points, 4-d (the unnamed vector) and BM25-like sparse ``bm25``; ``other``:
    an empty 4-d collection."""
    s = QdrantClientStore(":memory:")
    s.create_collection("c", 4, sparse_vector_name="bm25")
    s.create_collection("other", 4)
    s.upsert(
        "c",
        [
            PointRecord(str(i), v, {"n": i, "parity": i % 2}, terms(i))
            for i, v in enumerate(vectors(4, 1))
        ],
    )
    try:
        yield s
    finally:
        s.close()


def shared(store: QdrantClientStore) -> QdrantClient:
    """The local-mode client the store uses: another user of the same collections."""
    client: QdrantClient = store._client
    return client


def recreate(client: QdrantClient, dim: int, vector: str | None, sparse: str | None) -> None:
    """``c`` deleted and built again behind the store: ``dim``-d, the dense vector named
    ``vector`` (``None``: unnamed), BM25 named ``sparse``."""
    client.delete_collection("c")
    params = m.VectorParams(size=dim, distance=m.Distance.COSINE)
    client.create_collection(
        "c",
        vectors_config={vector: params} if vector else params,
        sparse_vectors_config={sparse: m.SparseVectorParams(modifier=m.Modifier.IDF)}
        if sparse
        else None,
    )
    points = []
    for i, v in enumerate(vectors(dim, 2)):
        named: dict[str, Any] = {vector or "": v}
        if sparse:
            t = terms(i)
            named[sparse] = m.SparseVector(indices=t.indices, values=t.values)
        points.append(
            m.PointStruct(id=i, vector=named if (vector or sparse) else v, payload={"n": i})
        )
    client.upsert("c", points)


def calls(monkeypatch: pytest.MonkeyPatch, client: QdrantClient, *names: str) -> dict[str, int]:
    """Count the client's calls of ``names`` (the real methods still run)."""
    counts = dict.fromkeys(names, 0)
    for name in names:
        real: Callable[..., Any] = getattr(client, name)

        def counting(*a: Any, _real: Callable[..., Any] = real, _n: str = name, **kw: Any) -> Any:
            counts[_n] += 1
            return _real(*a, **kw)

        monkeypatch.setattr(client, name, counting)
    return counts


def dense(dim: int = 4, limit: int = 5, **knobs: Any) -> SearchSpec:
    return SearchSpec(vector=[1.0] + [0.1] * (dim - 1), limit=limit, **knobs)


def same(a: list[Hit], b: list[Hit]) -> None:
    """The same points, payloads and vectors in the same order; the same scores up to the last
    bits (local mode's DBSF sums in a varying order: even one batch's twin requests differ
    there at 1e-10)."""
    assert [(h.id, h.payload, h.vector) for h in a] == [(h.id, h.payload, h.vector) for h in b]
    assert [h.score for h in a] == pytest.approx([h.score for h in b], rel=1e-9, abs=1e-12)


# -- the layout, read once ------------------------------------------------------------------
def test_searches_after_the_first_ask_nothing_more_of_the_server(store, monkeypatch):
    store.search("c", [dense()])
    counts = calls(monkeypatch, shared(store), "collection_exists", "get_collection")
    for _ in range(5):
        assert len(store.search("c", [dense()])[0]) == 5
    assert counts == {"collection_exists": 0, "get_collection": 0}


def test_a_collection_this_store_recreates_is_searched_with_its_new_layout(store):
    store.search("c", [dense()])
    store.delete_collection("c")
    with pytest.raises(CollectionNotFoundError) as gone:
        store.search("c", [dense()])
    assert "Existing collections: other." in str(gone.value)
    store.create_collection("c", 8, vector_name="d8")
    store.upsert("c", [PointRecord(str(i), v, {"n": i}) for i, v in enumerate(vectors(8, 3))])
    hits = store.search("c", [dense(8, with_vectors=True)])[0]
    assert len(hits) == 5 and all(len(h.vector or ()) == 8 for h in hits)


def test_a_collection_deleted_behind_the_store_is_not_found_with_the_names_that_exist(store):
    store.search("c", [dense()])
    shared(store).delete_collection("c")
    with pytest.raises(CollectionNotFoundError) as caught:
        store.search("c", [dense()])
    assert caught.value.code is ErrorCode.COLLECTION_NOT_FOUND
    assert "Existing collections: other." in str(caught.value)


@pytest.mark.parametrize(
    ("vector", "sparse"), [(None, "bm25"), ("dense", "bm25"), ("dense", "terms")]
)
def test_a_collection_rebuilt_behind_the_store_is_searched_as_it_is_now(store, vector, sparse):
    """Another size (and another dense or sparse name): the cached layout is stale for every
    search; each one reads the layout again and gets what a fresh store gets."""
    for mode in ("dense", "sparse", "hybrid"):
        store.search("c", [dense(4, mode=mode, sparse=terms(1))])
    recreate(shared(store), 6, vector, sparse)
    fresh = QdrantClientStore(":memory:")
    fresh.close()
    fresh._client = shared(store)  # the same collections, and no layout cached yet
    for mode in ("dense", "sparse", "hybrid"):
        spec = dense(6, mode=mode, sparse=terms(1), with_vectors=True)
        got = store.search("c", [spec])[0]
        same(got, fresh.search("c", [spec])[0])
        assert len(got) == 5, mode
        assert all(len(h.vector or ()) == 6 for h in got)
    # and the old size is now the query's mistake, said in the new size's terms
    with pytest.raises(QueryValidationError, match=r"size 4 does not fit .*\(size 6\)"):
        store.search("c", [dense(4)])


def test_a_search_the_collection_refuses_is_refused_once_the_layout_is_confirmed(
    store, monkeypatch
):
    store.search("c", [dense()])
    counts = calls(monkeypatch, shared(store), "get_collection", "query_points")
    with pytest.raises(QueryValidationError, match="size 3 does not fit"):
        store.search("c", [dense(3)])
    # read again once, found unchanged: the same error, and no second search
    assert counts == {"get_collection": 1, "query_points": 0}


def test_a_layout_read_while_this_store_rebuilds_the_collection_is_not_kept(store, monkeypatch):
    """A read of the server that started before the rebuild (another thread, in the server)
    finishes after it: the rebuilt collection's layout stays cached, not the old one."""
    client = shared(store)
    real = client.get_collection
    state = {"raced": False}

    def racing(name: str, *a: Any, **kw: Any) -> Any:
        info = real(name, *a, **kw)
        if not state["raced"]:  # while this read is on its way back, the collection changes
            state["raced"] = True
            store.delete_collection("c")
            store.create_collection("c", 8)
            store.upsert("c", [PointRecord(str(i), v, {}) for i, v in enumerate(vectors(8, 4))])
        return info

    monkeypatch.setattr(client, "get_collection", racing)
    assert store.collection_info("c").dimension == 4  # the read that was overtaken
    counts = calls(monkeypatch, client, "get_collection")
    assert len(store.search("c", [dense(8)])[0]) == 5
    assert counts == {"get_collection": 0}


# -- one request: query_points -------------------------------------------------------------
SPECS = {
    "dense": dense(limit=10),
    "dense-filtered-vectors": dense(limit=10, filter={"parity": [1]}, with_vectors=True),
    "sparse": SearchSpec(vector=None, sparse=terms(2), limit=10, mode="sparse"),
    "hybrid-rrf": dense(limit=10, mode="hybrid", sparse=terms(2)),
    "hybrid-dbsf": dense(limit=10, mode="hybrid", sparse=terms(2), fusion="dbsf"),
    "hybrid-rrf-k-weights": dense(
        limit=10, mode="hybrid", sparse=terms(2), rrf_k=10, fusion_weights=(2.0, 1.0)
    ),
    "hybrid-linear": dense(
        limit=10, mode="hybrid", sparse=terms(2), fusion="linear", fusion_weights=(0.7, 0.3)
    ),
}


@pytest.mark.parametrize("name", SPECS)
def test_one_search_is_one_query_points_call_with_the_batch_calls_hits(store, monkeypatch, name):
    spec = SPECS[name]
    batched = store.search("c", [spec, spec])  # two requests or more: query_batch_points
    same(batched[0], batched[1])
    counts = calls(monkeypatch, shared(store), "query_points", "query_batch_points")
    alone = store.search("c", [spec])[0]
    linear = spec.fusion == "linear"  # two candidate requests, so still a batch
    assert counts == {"query_points": 0 if linear else 1, "query_batch_points": int(linear)}
    same(alone, batched[0])
    assert len(alone) > 0


@pytest.mark.parametrize("mode", ["dense", "sparse", "hybrid"])
def test_one_search_gives_what_query_batch_points_gives_for_the_same_request(store, mode):
    """Against requests written here with qdrant-client's own models."""
    t = terms(2)
    sparse = m.SparseVector(indices=t.indices, values=t.values)
    query = [1.0, 0.1, 0.1, 0.1]
    flt = m.Filter(must=[m.FieldCondition(key="parity", match=m.MatchValue(value=0))])
    common: dict[str, Any] = {"limit": 8, "with_payload": True, "filter": flt}
    request = {
        "dense": m.QueryRequest(query=query, **common),
        "sparse": m.QueryRequest(query=sparse, using="bm25", **common),
        "hybrid": m.QueryRequest(
            prefetch=[
                m.Prefetch(query=query, limit=100, filter=flt),
                m.Prefetch(query=sparse, using="bm25", limit=100, filter=flt),
            ],
            query=m.FusionQuery(fusion=m.Fusion.RRF),
            **common,
        ),
    }[mode]
    want = shared(store).query_batch_points("c", requests=[request])[0].points
    spec = SearchSpec(vector=query, sparse=t, limit=8, mode=mode, filter={"parity": [0]})  # type: ignore[arg-type]
    got = store.search("c", [spec])[0]
    assert [(h.id, h.payload) for h in got] == [(str(p.id), p.payload) for p in want]
    assert [h.score for h in got] == [p.score for p in want]
    assert len(got) > 0 and all(h.payload["parity"] == 0 for h in got)


# -- through the retriever ------------------------------------------------------------------
@pytest.mark.slow
def test_the_retriever_answers_a_collection_changed_behind_it_with_a_contract_code(embedder):
    """Deleted: COLLECTION_NOT_FOUND naming what exists; rebuilt with a named vector: its
    results. Never an unmapped error (a 500 from the server)."""
    from ragsonde.config import Settings
    from ragsonde.retriever import Retriever

    texts = ["Aspirin lowers the risk of heart attack.", "Penguins live in the south."]
    vecs = embedder.embed_documents(texts).tolist()
    store = QdrantClientStore(":memory:")
    store.create_collection("docs", embedder.dimension)
    store.create_collection("other", embedder.dimension)
    store.upsert(
        "docs",
        [
            PointRecord(str(i), v, {"text": t})
            for i, (t, v) in enumerate(zip(texts, vecs, strict=True))
        ],
    )
    retriever = Retriever(
        Settings(qdrant_url=":memory:", collection="docs"), store=store, embedder=embedder
    )
    try:
        first = retriever.retrieve({"query_text": "heart attack", "top_k": 2})
        assert first.status == "success" and first.results[0].chunk_id == "0"

        client = shared(store)
        client.delete_collection("docs")
        gone = retriever.retrieve({"query_text": "heart attack", "top_k": 2})
        assert gone.status == "error" and gone.error is not None
        assert gone.error.code == ErrorCode.COLLECTION_NOT_FOUND
        assert "Existing collections: other." in gone.error.message

        params = m.VectorParams(size=embedder.dimension, distance=m.Distance.COSINE)
        client.create_collection("docs", vectors_config={"minilm": params})
        client.upsert(
            "docs",
            [
                m.PointStruct(id=7 + i, vector={"minilm": v}, payload={"text": t})
                for i, (t, v) in enumerate(zip(texts, vecs, strict=True))
            ],
        )
        back = retriever.retrieve({"query_text": "penguins", "top_k": 2})
        assert back.status == "success", back.error
        assert [r.chunk_id for r in back.results] == ["8", "7"]
    finally:
        retriever.close()
        store.close()
