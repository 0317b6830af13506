"""Adapters both ways (issue 12.5): ragsonde's retrieval inside LangChain and LlamaIndex, and a
pushed collection that each framework reads natively, metadata intact."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.errors import CollectionNotFoundError
from ragsonde.retriever import Retriever
from ragsonde.store import open_store
from tests.integrations.support import lc_embeddings, li_embeddings, quiet_local_mode
from tests.support import DOCS, fill, run

pytestmark = pytest.mark.slow

QUESTION = "how does lidar measure distance?"


@pytest.fixture(scope="module")
def home(tmp_path_factory, embedder) -> Path:
    path = tmp_path_factory.mktemp("adapters")
    store = open_store(Settings(home=path))
    fill(store, embedder, "docs")
    store.close()
    return path


@pytest.fixture
def retriever(home, embedder):
    with Retriever(Settings(home=home, collection="docs"), embedder=embedder) as r:
        yield r


def test_langchain_retriever(retriever):
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document

    from ragsonde.integrations.langchain import RagsondeRetriever

    expected = retriever.retrieve({"query_text": QUESTION, "top_k": 3})
    docs = RagsondeRetriever(retriever=retriever, top_k=3).invoke(QUESTION)
    assert all(isinstance(d, Document) for d in docs)
    assert [d.id for d in docs] == [r.chunk_id for r in expected.results]
    assert [d.page_content for d in docs] == [r.text for r in expected.results]
    top = docs[0].metadata
    assert "Lidar" in docs[0].page_content
    assert top["doc_id"] == "lidar" and top["url"] == "https://docs.example/lidar"
    assert top["rank"] == 0 and top["similarity_score"] > docs[1].metadata["similarity_score"]
    assert top["timings"]["total_ms"] > 0 and top["timings"]["embedding_ms"] > 0
    filtered = RagsondeRetriever(retriever=retriever, filters={"section": "Control > PID"})
    assert [d.metadata["doc_id"] for d in filtered.invoke(QUESTION)] == ["pid"]
    with pytest.raises(CollectionNotFoundError):
        RagsondeRetriever(retriever=retriever, collection="nope").invoke(QUESTION)


def test_llamaindex_retriever(retriever):
    pytest.importorskip("llama_index.core")
    from llama_index.core.schema import NodeWithScore

    from ragsonde.integrations.llamaindex import RagsondeRetriever

    expected = retriever.retrieve({"query_text": QUESTION, "top_k": 3})
    nodes = RagsondeRetriever(retriever, top_k=3).retrieve(QUESTION)
    assert all(isinstance(n, NodeWithScore) for n in nodes)
    assert [n.node.node_id for n in nodes] == [r.chunk_id for r in expected.results]
    assert [n.score for n in nodes] == [r.similarity_score for r in expected.results]
    assert nodes[0].node.get_content() == expected.results[0].text
    assert nodes[0].node.metadata["title"] == "LIDAR"
    assert nodes[0].node.metadata["timings"]["search_ms"] > 0
    with pytest.raises(CollectionNotFoundError):
        RagsondeRetriever(retriever, collection="nope").retrieve(QUESTION)


def test_langchain_per_call_options_override_the_constructors(retriever):
    """LangChain users pass ``k``/``top_k`` and ``filter`` to ``invoke``; the call wins."""
    pytest.importorskip("langchain_core")
    from ragsonde.errors import QueryValidationError
    from ragsonde.integrations.langchain import RagsondeRetriever

    expected = retriever.retrieve({"query_text": QUESTION, "top_k": 4})
    lc = RagsondeRetriever(retriever=retriever, k=4)
    assert [d.id for d in lc.invoke(QUESTION)] == [r.chunk_id for r in expected.results]
    assert [d.id for d in lc.invoke(QUESTION, k=1)] == [expected.results[0].chunk_id]
    assert len(lc.invoke(QUESTION, top_k=2)) == 2
    only_pid = lc.invoke(QUESTION, filter={"section": "Control > PID"})
    assert [d.metadata["doc_id"] for d in only_pid] == ["pid"]
    narrowed = RagsondeRetriever(retriever=retriever, filter={"section": "Control > PID"})
    assert [d.metadata["doc_id"] for d in narrowed.invoke(QUESTION)] == ["pid"]
    assert len(narrowed.invoke(QUESTION, filters=None)) == 5  # the call lifts the filter
    assert len(lc.invoke(QUESTION)) == 4  # the constructor's k is untouched by earlier calls
    with pytest.raises(QueryValidationError, match="top_cake"):
        lc.invoke(QUESTION, top_cake=2)
    with pytest.raises(QueryValidationError, match="top_k"):
        lc.invoke(QUESTION, k=0)
    with pytest.raises(QueryValidationError, match="not both"):
        lc.invoke(QUESTION, k=1, top_k=2)


async def _aretrieve(li, query, **kw):
    return await li.aretrieve(query, **kw)


def test_llamaindex_per_call_options_override_the_constructors(retriever):
    """LlamaIndex's ``retrieve``/``aretrieve`` with a string or a ``QueryBundle`` take the same
    per-call options; concurrent calls keep their own."""
    pytest.importorskip("llama_index.core")
    import asyncio

    from llama_index.core.schema import QueryBundle

    from ragsonde.errors import QueryValidationError
    from ragsonde.integrations.llamaindex import RagsondeRetriever

    expected = retriever.retrieve({"query_text": QUESTION, "top_k": 4})
    li = RagsondeRetriever(retriever, top_k=4)
    bundle = QueryBundle(QUESTION)
    assert [n.node.node_id for n in li.retrieve(bundle)] == [r.chunk_id for r in expected.results]
    assert [n.node.node_id for n in li.retrieve(bundle, top_k=1)] == [expected.results[0].chunk_id]
    assert len(li.retrieve(QUESTION, k=2)) == 2
    only_pid = li.retrieve(bundle, filters={"section": "Control > PID"})
    assert [n.node.metadata["doc_id"] for n in only_pid] == ["pid"]

    async def both():
        return await asyncio.gather(
            _aretrieve(li, bundle, top_k=1), _aretrieve(li, QUESTION, filter={"doc_id": "gps"})
        )

    one, gps = asyncio.run(both())
    assert [n.node.node_id for n in one] == [expected.results[0].chunk_id]
    assert [n.node.metadata["doc_id"] for n in gps] == ["gps"]
    assert len(li.retrieve(bundle)) == 4
    with pytest.raises(QueryValidationError, match="score_threshold"):
        li.retrieve(bundle, score_threshold=2.0)
    for query in (None, 3, QUESTION.encode()):  # a pydantic error and an AttributeError before
        with pytest.raises(QueryValidationError, match="a string or a QueryBundle"):
            li.retrieve(query)
    with pytest.raises(QueryValidationError, match="Bad option mode"):
        RagsondeRetriever(retriever, mode="nope")


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"top_k": 0}, "Bad option top_k"),
        ({"k": 0}, "Bad option top_k"),
        ({"mode": "nope"}, "Bad option mode"),  # accepted here, refused at the first query
        ({"score_threshold": 2}, "Bad option score_threshold"),
        ({"filter": "x"}, "Bad option filters"),
        ({"retriever": None}, "must be a ragsonde Retriever"),
        ({"retriever": {}}, "must be a ragsonde Retriever"),
    ],
)
def test_langchain_constructor_options_are_ragsonde_errors(retriever, options, named):
    """A bad constructor option is the QueryValidationError a bad per-call option is, not
    pydantic's ValidationError (nor, for a bad mode, nothing until the first query)."""
    pytest.importorskip("langchain_core")
    from ragsonde.errors import QueryValidationError
    from ragsonde.integrations.langchain import RagsondeRetriever

    with pytest.raises(QueryValidationError, match=named):
        RagsondeRetriever(**{"retriever": retriever, **options})
    assert RagsondeRetriever(retriever=retriever, k=2, mode="hybrid").top_k == 2


def _push(home: Path, target: Path, layout: str) -> dict:
    res = run(
        "push",
        "-c",
        "docs",
        "--to",
        f"path:{target}",
        "--layout",
        layout,
        "--json",
        env={"RAGSONDE_HOME": str(home)},
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_push_layout_langchain_is_read_by_langchain(home, tmp_path, embedder):
    pytest.importorskip("langchain_qdrant")
    from langchain_qdrant import QdrantVectorStore

    target = tmp_path / "lc"
    assert _push(home, target, "langchain")["copied"] == len(DOCS)
    with quiet_local_mode():
        store = QdrantVectorStore.from_existing_collection(
            embedding=lc_embeddings(embedder), path=str(target), collection_name="docs"
        )
    try:
        hits = store.similarity_search_with_score(QUESTION, k=3)
    finally:
        store.client.close()
    doc, _score = hits[0]
    by_id = {d[0]: d for d in DOCS}
    assert doc.metadata["doc_id"] == "lidar"
    assert doc.page_content == by_id["lidar"][2]
    for d, _ in hits:  # every field of the source payload, intact, in LangChain's metadata
        name = d.metadata["doc_id"]
        assert d.page_content == by_id[name][2]
        assert d.metadata["url"] == f"https://docs.example/{name}"
        assert d.metadata["section"] == by_id[name][1]
        assert d.metadata["lang"] == "en" and d.metadata["chunk_index"] == 0
    # and ragsonde reads the LangChain copy with no configuration, like the source
    settings = Settings(home=home, collection="docs", qdrant_url=str(target))
    with Retriever(settings, embedder=embedder) as r:
        resp = r.retrieve({"query_text": QUESTION, "top_k": 3})
    assert [x.text for x in resp.results] == [d.page_content for d, _ in hits]
    assert resp.results[0].url == "https://docs.example/lidar"


def test_push_layout_llamaindex_is_read_by_llamaindex(home, tmp_path, embedder):
    pytest.importorskip("llama_index.vector_stores.qdrant")
    from llama_index.core import VectorStoreIndex
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient

    target = tmp_path / "li"
    assert _push(home, target, "llamaindex")["copied"] == len(DOCS)
    client = QdrantClient(path=str(target))
    try:
        index = VectorStoreIndex.from_vector_store(
            QdrantVectorStore(client=client, collection_name="docs"),
            embed_model=li_embeddings(embedder),
        )
        nodes = index.as_retriever(similarity_top_k=3).retrieve(QUESTION)
    finally:
        client.close()
    top = nodes[0].node
    assert top.get_content() == DOCS[0][2]
    assert top.metadata["url"] == "https://docs.example/lidar"
    assert top.ref_doc_id == "lidar"
    settings = Settings(home=home, collection="docs", qdrant_url=str(target))
    with Retriever(settings, embedder=embedder) as r:
        resp = r.retrieve({"query_text": QUESTION, "top_k": 3})
    assert [x.chunk_id for x in resp.results] == [n.node.node_id for n in nodes]
    assert resp.results[0].text == DOCS[0][2]
    # a second push finds every point already there, in the same layout
    assert _push(home, target, "llamaindex")["skipped"] == len(DOCS)
