"""Collections other pipelines built: named vectors chosen with the ``vector`` setting, and clear
errors for several, a wrong name, a multivector or sparse-only collection.

The collections are built with each library's own API (qdrant-edge, qdrant-client on disk), never
through ragsonde, so the store reads what another pipeline would have written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.errors import QueryValidationError
from ragsonde.models.points import SearchSpec
from ragsonde.models.scores import Distance
from ragsonde.retriever import Retriever
from ragsonde.store import open_store

#: The two dense vectors of collection 'two': name -> (size, distance).
TWO = {"text": (4, "Cosine"), "title": (3, "Euclid")}
POINTS = [
    (1, {"text": [1.0, 0.0, 0.0, 0.0], "title": [0.0, 0.0, 1.0]}),
    (2, {"text": [0.0, 1.0, 0.0, 0.0], "title": [0.5, 0.5, 0.0]}),
    (3, {"text": [0.0, 0.0, 1.0, 0.0], "title": [1.0, 0.0, 0.0]}),
]


def _build_edge(home: Path) -> None:
    import qdrant_edge as qe

    root = home / "collections"

    def create(name: str, config: object, points: list[object] | None = None) -> None:
        shard = qe.EdgeShard.create(str(root / name), config)
        if points:
            shard.update(qe.UpdateOperation.upsert_points(points))
        shard.flush()
        shard.close()

    create(
        "two",
        qe.EdgeConfig(
            vectors={
                n: qe.EdgeVectorParams(size=s, distance=getattr(qe.Distance, d))
                for n, (s, d) in TWO.items()
            }
        ),
        [qe.Point(pid, vecs, {"text": f"p{pid}"}) for pid, vecs in POINTS],
    )
    multi = qe.MultiVectorConfig(comparator=qe.MultiVectorComparator.MaxSim)
    create(
        "multi",
        qe.EdgeConfig(
            vectors={
                "colbert": qe.EdgeVectorParams(
                    size=4, distance=qe.Distance.Cosine, multivector_config=multi
                )
            }
        ),
    )
    create(
        "sparse",
        qe.EdgeConfig(vectors={}, sparse_vectors={"bm25": qe.EdgeSparseVectorParams()}),
    )


def _build_client(folder: Path) -> None:
    from qdrant_client import QdrantClient
    from qdrant_client import models as m

    client = QdrantClient(path=str(folder))
    client.create_collection(
        "two",
        vectors_config={
            n: m.VectorParams(size=s, distance=m.Distance(d)) for n, (s, d) in TWO.items()
        },
    )
    client.upsert(
        "two",
        [m.PointStruct(id=pid, vector=vecs, payload={"text": f"p{pid}"}) for pid, vecs in POINTS],
    )
    client.create_collection(
        "multi",
        vectors_config={
            "colbert": m.VectorParams(
                size=4,
                distance=m.Distance.COSINE,
                multivector_config=m.MultiVectorConfig(comparator=m.MultiVectorComparator.MAX_SIM),
            )
        },
    )
    client.create_collection(
        "sparse", vectors_config={}, sparse_vectors_config={"bm25": m.SparseVectorParams()}
    )
    client.close()


@pytest.fixture(params=["edge", "qdrant-local"])
def settings_for(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., Settings]:
    """Settings factory over a home holding 'two', 'multi' and 'sparse', built by the library."""
    if request.param == "edge":
        _build_edge(tmp_path / "home")
        return lambda **kw: Settings(home=tmp_path / "home", **kw)
    _build_client(tmp_path / "qdrant")
    return lambda **kw: Settings(qdrant_url=f"path:{tmp_path / 'qdrant'}", **kw)


def test_several_dense_vectors_without_a_choice_lists_them(settings_for):
    store = open_store(settings_for())
    with pytest.raises(QueryValidationError, match="several dense vectors") as caught:
        store.collection_info("two")
    assert "'text' (4-d Cosine)" in str(caught.value)
    assert "'title' (3-d Euclid)" in str(caught.value)
    assert "--vector" in str(caught.value)
    store.close()


def test_the_vector_setting_chooses_one(settings_for):
    store = open_store(settings_for(vector="title"))
    info = store.collection_info("two")
    assert (info.vector_name, info.dimension, info.distance) == ("title", 3, Distance.EUCLID)
    hits = store.search(
        "two", [SearchSpec(vector=[1.0, 0.0, 0.0], limit=3, exact=True, with_vectors=True)]
    )[0]
    assert [h.id for h in hits] == ["3", "2", "1"]  # nearest by the 'title' vector, not 'text'
    assert hits[0].vector == pytest.approx([1.0, 0.0, 0.0])
    assert hits[0].score == pytest.approx(0.0, abs=1e-6)
    with pytest.raises(QueryValidationError, match=r"size 4 does not fit.*size 3"):
        store.search("two", [SearchSpec(vector=[1.0, 0.0, 0.0, 0.0], limit=1)])
    store.close()
    store = open_store(settings_for(vector="text"))
    hits = store.search("two", [SearchSpec(vector=[0.0, 1.0, 0.0, 0.0], limit=1)])[0]
    assert hits[0].id == "2"
    store.close()


def test_a_wrong_vector_name_lists_the_real_ones(settings_for):
    store = open_store(settings_for(vector="body"))
    with pytest.raises(QueryValidationError, match=r"no dense vector named 'body'.*'text'"):
        store.collection_info("two")
    store.close()


def test_multivector_and_sparse_only_collections_get_a_clear_error(settings_for):
    store = open_store(settings_for())
    with pytest.raises(QueryValidationError, match=r"several vectors per point.*ColBERT"):
        store.collection_info("multi")
    with pytest.raises(QueryValidationError, match=r"only sparse vectors \(bm25\)"):
        store.collection_info("sparse")
    # payload reads still work on them (inspect samples payloads)
    assert list(store.scroll("sparse")) == []
    store.close()


@pytest.mark.slow
def test_dimension_mismatch_names_both_sizes_before_embedding(settings_for, embedder):
    with Retriever(settings_for(vector="title", collection="two"), embedder=embedder) as r:
        resp = r.retrieve({"query_text": "anything"})
    assert resp.error is not None
    assert resp.error.code == "DIMENSION_MISMATCH"
    assert "384" in resp.error.message and "3-dimensional" in resp.error.message
    assert resp.timings.embedding_ms == 0.0
