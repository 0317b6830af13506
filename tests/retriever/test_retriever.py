from __future__ import annotations

import pytest

from ragsonde.models import Response
from ragsonde.retriever import Retriever
from ragsonde.store import open_store
from tests.support import DOCS, fill

QUERIES = {
    "how does a laser rangefinder measure distance": "lidar",
    "why does my robot's heading drift over time": "imu",
    "battery voltage too low, is it dangerous": "lipo",
    "shortest path search with a heuristic": "astar",
    "centimetre accurate satellite positioning": "gps",
}


def assert_contract(resp: Response, top_k: int) -> None:
    assert resp.status == "success", resp.error
    assert resp.total_results == len(resp.results) <= top_k
    assert [r.rank for r in resp.results] == list(range(len(resp.results)))
    scores = [r.similarity_score for r in resp.results]
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores == sorted(scores, reverse=True)
    t = resp.timings
    assert min(t.embedding_ms, t.search_ms, t.post_processing_ms, t.total_ms) >= 0
    assert t.embedding_ms + t.search_ms + t.post_processing_ms <= t.total_ms + 1e-6
    assert resp.top_k_requested == top_k
    assert resp.model == "local:sentence-transformers/all-MiniLM-L6-v2"


@pytest.mark.parametrize(("text", "doc"), QUERIES.items())
def test_right_page_first_and_contract_holds(retriever, text, doc):
    resp = retriever.retrieve({"query_text": text, "top_k": 3})
    assert_contract(resp, 3)
    top = resp.results[0]
    assert top.metadata["doc_id"] == doc
    assert top.url == f"https://docs.example/{doc}"
    assert top.title == doc.upper()
    assert top.chunk_index == 0
    assert top.created_at == "2026-01-01T00:00:00+00:00"
    assert top.text == next(d[2] for d in DOCS if d[0] == doc)
    assert top.raw_score == pytest.approx(top.similarity_score)
    assert set(top.metadata) == {"doc_id", "lang"}


def test_query_id_is_echoed(retriever):
    resp = retriever.retrieve({"text": "lidar", "query_id": "my-id-1"})
    assert resp.query_id == "my-id-1" and resp.query == "lidar"


def test_threshold_keeps_only_scores_at_or_above(retriever):
    everything = retriever.retrieve({"text": "laser distance sensor", "top_k": 8})
    cut = everything.results[2].similarity_score
    kept = retriever.retrieve({"text": "laser distance sensor", "top_k": 8, "threshold": cut})
    assert_contract(kept, 8)
    assert 1 <= kept.total_results < everything.total_results
    assert all(r.similarity_score >= cut for r in kept.results)


def test_filters(retriever):
    one = retriever.retrieve(
        {"text": "sensor", "top_k": 8, "filters": {"section": "Sensors > GPS"}}
    )
    assert [r.section for r in one.results] == ["Sensors > GPS"]
    any_of = retriever.retrieve(
        {"text": "sensor", "top_k": 8, "filters": {"doc_id": ["pid", "slam"]}}
    )
    assert sorted(r.metadata["doc_id"] for r in any_of.results) == ["pid", "slam"]
    unindexed = retriever.retrieve({"text": "sensor", "top_k": 8, "filters": {"lang": "fr"}})
    assert unindexed.status == "success" and unindexed.results == []


@pytest.mark.parametrize("bad", [{"colour": "red"}, {"metadata": "x"}])
def test_unknown_filter_field_is_a_validation_error(retriever, bad):
    resp = retriever.retrieve({"text": "sensor", "filters": bad})
    assert resp.status == "error" and resp.error.code == "VALIDATION_ERROR"
    assert next(iter(bad)) in resp.error.message
    assert resp.results == [] and resp.total_results == 0


def test_metadata_and_vectors_switches(retriever):
    bare = retriever.retrieve({"text": "pid", "include_metadata": False}).model_dump()
    assert all(set(r) == {"chunk_id", "text", "similarity_score", "rank"} for r in bare["results"])
    vec = retriever.retrieve({"text": "pid", "top_k": 1, "include_vectors": True})
    assert len(vec.results[0].vector) == 384
    assert "vector" not in retriever.retrieve({"text": "pid"}).model_dump()["results"][0]


def test_missing_collection(retriever):
    resp = retriever.retrieve({"text": "x", "collection": "nope"})
    assert resp.error.code == "COLLECTION_NOT_FOUND" and "nope" in resp.error.message
    assert resp.collection == "nope"


def test_dimension_mismatch_is_detected_before_search(store_settings, embedder):
    store = open_store(store_settings)
    store.create_collection("small", 8)
    resp = Retriever(store_settings, store=store, embedder=embedder).retrieve(
        {"text": "x", "collection": "small"}
    )
    store.close()
    assert resp.error.code == "DIMENSION_MISMATCH"
    assert "384" in resp.error.message and "8-dimensional" in resp.error.message
    assert resp.timings.embedding_ms == 0.0  # nothing was embedded or searched


def test_sparse_mode_on_a_dense_collection(retriever):
    resp = retriever.retrieve({"text": "x", "mode": "sparse"})
    assert resp.error.code == "VALIDATION_ERROR" and "dense" in resp.error.message


class CountingEmbedder:
    """Spy around the real model: counts calls, changes nothing."""

    def __init__(self, inner):
        self.inner, self.calls = inner, []
        self.name, self.dimension = inner.name, inner.dimension

    def embed_queries(self, texts):
        self.calls.append(list(texts))
        return self.inner.embed_queries(texts)

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)


class CountingStore:
    def __init__(self, inner):
        self.inner, self.searches = inner, []
        self.backend = inner.backend

    def collection_info(self, name):
        return self.inner.collection_info(name)

    def search(self, collection, specs):
        self.searches.append(len(specs))
        return self.inner.search(collection, specs)


def test_batch_one_embedding_call_one_search_partial(store_settings, embedder):
    store = open_store(store_settings)
    fill(store, embedder)
    spy_e, spy_s = CountingEmbedder(embedder), CountingStore(store)
    r = Retriever(store_settings, store=spy_s, embedder=spy_e)
    body = {
        "batch_id": "b1",
        "queries": [{"text": t, "query_id": f"q{i}"} for i, t in enumerate(QUERIES)]
        + [{"text": ""}, {"text": "x", "top_k": 1000}, "not an object"],
    }
    out = r.retrieve_batch(body)
    store.close()
    assert out.batch_id == "b1" and out.status == "partial"
    assert len(out.responses) == len(body["queries"])
    assert [x.query_id for x in out.responses[:5]] == [f"q{i}" for i in range(5)]
    for resp, doc in zip(out.responses[:5], QUERIES.values(), strict=True):
        assert_contract(resp, 5)
        assert resp.results[0].metadata["doc_id"] == doc
    assert [x.error.code for x in out.responses[5:]] == ["VALIDATION_ERROR"] * 3
    assert spy_e.calls == [list(QUERIES)]
    assert spy_s.searches == [5]
    assert out.batch_latency_ms >= max(x.timings.total_ms for x in out.responses)


def test_batch_results_equal_single_results(retriever):
    texts = list(QUERIES)
    batch = retriever.retrieve_batch({"queries": [{"text": t} for t in texts]})
    for t, resp in zip(texts, batch.responses, strict=True):
        single = retriever.retrieve({"text": t})
        assert [x.chunk_id for x in resp.results] == [x.chunk_id for x in single.results]


@pytest.mark.parametrize(
    "body", [{}, {"queries": []}, {"queries": "x"}, [], {"queries": [{}] * 101}]
)
def test_bad_batch_envelope_raises(retriever, body):
    from ragsonde.errors import QueryValidationError

    with pytest.raises(QueryValidationError):
        retriever.retrieve_batch(body)


def test_edge_and_client_local_mode_agree(tmp_path, embedder):
    from ragsonde.config import Settings

    tops = []
    for extra in ({}, {"qdrant_url": ":memory:"}):
        settings = Settings(home=tmp_path / "h", collection="docs", **extra)
        store = open_store(settings)
        fill(store, embedder)
        r = Retriever(settings, store=store, embedder=embedder)
        tops.append(
            [[x.chunk_id for x in r.retrieve({"text": t, "top_k": 3}).results] for t in QUERIES]
        )
        store.close()
    assert tops[0] == tops[1]


def test_langchain_layout_is_read_through_the_mapping(store_settings, embedder):
    from ragsonde.models.points import PointRecord

    store = open_store(store_settings)
    store.create_collection("lc", embedder.dimension)
    vec = embedder.embed_documents(["Lidar uses lasers."])[0].tolist()
    store.upsert(
        "lc",
        [
            PointRecord(
                id="7",
                vector=vec,
                payload={
                    "page_content": "Lidar uses lasers.",
                    "metadata": {
                        "source": "https://lc.example/lidar",
                        "title": "Lidar",
                        "position": 2,
                    },
                },
            )
        ],
    )
    r = Retriever(store_settings, store=store, embedder=embedder)
    resp = r.retrieve(
        {"text": "laser", "collection": "lc", "filters": {"url": "https://lc.example/lidar"}}
    )
    store.close()
    top = resp.results[0]
    assert (top.text, top.url, top.title) == (
        "Lidar uses lasers.",
        "https://lc.example/lidar",
        "Lidar",
    )
    assert "page_content" not in top.metadata and "metadata" in top.metadata
