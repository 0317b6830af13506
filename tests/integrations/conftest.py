"""Collections that the frameworks' own code builds: LangChain, LlamaIndex and Haystack write 30
SciFact abstracts into qdrant-client local-mode folders, embedded by ragsonde's local model (so
vectors are identical to what ragsonde embeds). Never hand-written imitations of their payloads.

Each folder is built once per session and closed before a test opens it (local mode locks it).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.support import (
    N_DOCS,
    Built,
    lc_embeddings,
    lc_sparse,
    li_embeddings,
    quiet_local_mode,
)


@pytest.fixture(scope="session")
def scifact_rows(scifact_dir: Path) -> list[dict[str, Any]]:
    with (scifact_dir / "corpus.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in itertools.islice(f, N_DOCS)]


@pytest.fixture(scope="session")
def scifact_queries(scifact_dir: Path) -> list[str]:
    """Claims whose relevant abstracts are among the first rows (and a few that are not)."""
    with (scifact_dir / "queries.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in itertools.islice(f, 8)]


@pytest.fixture(scope="session")
def langchain_built(tmp_path_factory, embedder, scifact_rows) -> Built:
    pytest.importorskip("langchain_qdrant")
    from langchain_core.documents import Document
    from langchain_qdrant import QdrantVectorStore

    path = tmp_path_factory.mktemp("lc") / "qdrant"
    docs = [
        Document(page_content=r["text"], metadata={"doc_id": r["_id"], "title": r["title"]})
        for r in scifact_rows
    ]
    store = QdrantVectorStore.from_documents(
        docs, lc_embeddings(embedder), path=str(path), collection_name="lc_scifact"
    )
    store.client.close()
    return Built("langchain", path, "lc_scifact", scifact_rows)


@pytest.fixture(scope="session")
def llamaindex_built(tmp_path_factory, embedder, scifact_rows) -> Built:
    pytest.importorskip("llama_index.vector_stores.qdrant")
    from llama_index.core import Document, StorageContext, VectorStoreIndex
    from llama_index.vector_stores.qdrant import QdrantVectorStore
    from qdrant_client import QdrantClient

    path = tmp_path_factory.mktemp("li") / "qdrant"
    client = QdrantClient(path=str(path))
    try:
        store = QdrantVectorStore(client=client, collection_name="li_scifact")
        with quiet_local_mode():
            VectorStoreIndex.from_documents(
                [
                    Document(text=r["text"], id_=r["_id"], metadata={"title": r["title"]})
                    for r in scifact_rows
                ],
                storage_context=StorageContext.from_defaults(vector_store=store),
                embed_model=li_embeddings(embedder),
            )
    finally:
        client.close()
    return Built("llamaindex", path, "li_scifact", scifact_rows)


@pytest.fixture(scope="session")
def haystack_built(tmp_path_factory, embedder, scifact_rows) -> Built:
    pytest.importorskip("haystack_integrations.document_stores.qdrant")
    from haystack import Document
    from haystack_integrations.document_stores.qdrant import QdrantDocumentStore

    path = tmp_path_factory.mktemp("hs") / "qdrant"
    store = QdrantDocumentStore(
        path=str(path), index="hs_scifact", embedding_dim=embedder.dimension, similarity="cosine"
    )
    vectors = embedder.embed_documents([r["text"] for r in scifact_rows])
    with quiet_local_mode():
        store.write_documents(
            [
                Document(
                    content=r["text"],
                    meta={"doc_id": r["_id"], "title": r["title"]},
                    embedding=v.tolist(),
                )
                for r, v in zip(scifact_rows, vectors, strict=True)
            ]
        )
    store._client.close()  # Haystack keeps its client private; local mode must be released
    return Built("haystack", path, "hs_scifact", scifact_rows)


@pytest.fixture(scope="session", params=["langchain", "llamaindex", "haystack"])
def built(request) -> Built:
    return request.getfixturevalue(f"{request.param}_built")


@pytest.fixture(scope="session", params=["bm25", "hashing"])
def langchain_hybrid(request, tmp_path_factory, embedder, scifact_rows) -> Built:
    """LangChain's hybrid mode (``RetrievalMode.HYBRID``): the unnamed dense vector and a sparse
    one, ``langchain-sparse``, made by a BM25 (with the IDF modifier, as Qdrant's BM25 asks) or
    by a hashing vectorizer (:func:`~tests.integrations.support.lc_sparse`)."""
    pytest.importorskip("langchain_qdrant")
    from langchain_core.documents import Document
    from langchain_qdrant import QdrantVectorStore, RetrievalMode
    from qdrant_client import models

    kind = request.param
    path = tmp_path_factory.mktemp(f"lc_{kind}") / "qdrant"
    docs = [
        Document(page_content=r["text"], metadata={"doc_id": r["_id"], "title": r["title"]})
        for r in scifact_rows
    ]
    store = QdrantVectorStore.from_documents(
        docs,
        lc_embeddings(embedder),
        sparse_embedding=lc_sparse(kind),
        retrieval_mode=RetrievalMode.HYBRID,
        sparse_vector_params={"modifier": models.Modifier.IDF} if kind == "bm25" else {},
        path=str(path),
        collection_name=f"lc_{kind}",
    )
    store.client.close()
    return Built(f"langchain-{kind}", path, f"lc_{kind}", scifact_rows)


@pytest.fixture(scope="session")
def langchain_body(tmp_path_factory, embedder, scifact_rows) -> Built:
    """LangChain with its own payload keys (``content_payload_key="body"``,
    ``metadata_payload_key="meta"``): the text at a path no known layout reads."""
    pytest.importorskip("langchain_qdrant")
    from langchain_core.documents import Document
    from langchain_qdrant import QdrantVectorStore

    path = tmp_path_factory.mktemp("lc_body") / "qdrant"
    store = QdrantVectorStore.from_documents(
        [Document(page_content=r["text"], metadata={"doc_id": r["_id"]}) for r in scifact_rows],
        lc_embeddings(embedder),
        path=str(path),
        collection_name="lc_body",
        content_payload_key="body",
        metadata_payload_key="meta",
    )
    store.client.close()
    return Built("langchain-body", path, "lc_body", scifact_rows)
