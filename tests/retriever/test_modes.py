"""mode=sparse (BM25 in Qdrant) and mode=hybrid (dense + BM25 fused in Qdrant), on both stores."""

from __future__ import annotations

import pytest

from ragsonde.config import Settings
from ragsonde.ingest import IngestOptions, ingest
from ragsonde.retriever import Retriever
from ragsonde.samples import robotics_docs
from ragsonde.store import open_store


@pytest.fixture
def hybrid(store_settings, embedder, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("lidar", "imu", "gps", "docking"):
        (docs / f"{name}.md").write_bytes((robotics_docs() / f"{name}.md").read_bytes())
    store = open_store(store_settings)
    ingest(
        str(docs),
        settings=store_settings,
        store=store,
        embedder=embedder,
        options=IngestOptions(sparse=True),
    )
    yield Retriever(store_settings, store=store, embedder=embedder)
    store.close()


def test_sparse_and_hybrid_find_the_page(hybrid):
    info = hybrid.store.collection_info("docs")
    assert info.sparse_vector_name == "bm25"
    for mode in ("dense", "sparse", "hybrid"):
        resp = hybrid.retrieve({"query": "GPS satellite fix accuracy", "top_k": 3, "mode": mode})
        assert resp.status == "success", resp.error
        assert resp.results[0].metadata["doc_id"] == "gps", mode
    sparse = hybrid.retrieve({"query": "GPS satellite fix accuracy", "mode": "sparse", "top_k": 3})
    raw = [r.raw_score for r in sparse.results]
    assert raw == sorted(raw, reverse=True) and raw[0] > 1.0  # BM25 scores, not cosines
    assert sparse.timings.embedding_ms < 50  # no model call for BM25


def test_a_query_with_no_known_terms_finds_nothing_sparse(hybrid):
    resp = hybrid.retrieve({"query": "zzzqqq xxyyzz", "mode": "sparse"})
    assert resp.status == "success" and resp.results == []


def test_batch_mixes_modes(hybrid):
    out = hybrid.retrieve_batch(
        {
            "queries": [
                {"query": "automatic docking and charging", "mode": m}
                for m in ("dense", "sparse", "hybrid")
            ]
        }
    )
    assert out.status == "success"
    assert [r.results[0].metadata["doc_id"] for r in out.responses] == ["docking"] * 3


def test_dbsf_fusion(store_settings, hybrid):
    dbsf = Retriever(
        Settings(**{**store_settings.model_dump(), "search": {"fusion": "dbsf"}}),
        store=hybrid.store,
        embedder=hybrid.embedder,
    )
    resp = dbsf.retrieve({"query": "inertial measurement unit drift", "mode": "hybrid"})
    assert resp.status == "success" and resp.results[0].metadata["doc_id"] == "imu"


def test_linear_fusion_weights_move_the_ranking(store_settings, hybrid):
    def top(weights: tuple[float, float]) -> list[str]:
        search = {"fusion": "linear", "fusion_weights": weights}
        values = {**store_settings.model_dump(), "search": search}
        r = Retriever(Settings(**values), store=hybrid.store, embedder=hybrid.embedder)
        resp = r.retrieve({"query": "GPS satellite fix accuracy", "mode": "hybrid", "top_k": 8})
        assert resp.status == "success", resp.error
        return [res.chunk_id for res in resp.results]

    def alone(mode: str) -> list[str]:
        resp = hybrid.retrieve({"query": "GPS satellite fix accuracy", "mode": mode, "top_k": 8})
        return [res.chunk_id for res in resp.results]

    # all weight on one side ranks as that side alone; the retriever passes the setting through
    assert top((1.0, 0.0)) == alone("dense")
    assert top((0.0, 1.0))[:3] == alone("sparse")[:3]
    assert top((1.0, 0.0)) != top((0.0, 1.0))


def test_dense_only_collection_refuses_sparse_modes(store_settings, embedder, tmp_path):
    docs = tmp_path / "d"
    docs.mkdir()
    (docs / "gps.md").write_bytes((robotics_docs() / "gps.md").read_bytes())
    store = open_store(store_settings)
    try:
        ingest(str(docs), settings=store_settings, store=store, embedder=embedder)
        r = Retriever(store_settings, store=store, embedder=embedder)
        resp = r.retrieve({"query": "gps", "mode": "hybrid"})
        assert resp.error is not None and resp.error.code.value == "VALIDATION_ERROR"
        assert "dense search only" in resp.error.message
    finally:
        store.close()
