"""Collections that the frameworks' own code builds: LangChain, LlamaIndex and Haystack write 30
SciFact abstracts into qdrant-client local-mode folders, embedded by ragsonde's local model (so
vectors are identical to what ragsonde embeds). Never hand-written imitations of their payloads.

Each folder is built once per session and closed before a test opens it (local mode locks it).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ragsonde.config import Settings
from ragsonde.embedders.local import LocalEmbedder

N_DOCS = 30


@contextlib.contextmanager
def quiet_local_mode() -> Iterator[None]:
    """qdrant-client warns that local mode ignores the payload indexes the frameworks create."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Payload indexes have no effect", UserWarning)
        yield


@dataclass(frozen=True)
class Built:
    """A framework-built collection: its folder, name, and the SciFact rows in it."""

    framework: str
    path: Path
    collection: str
    rows: list[dict[str, Any]]

    def settings(self, **kw: Any) -> Settings:
        return Settings(
            home=self.path.parent / "home",
            collection=self.collection,
            qdrant_url=str(self.path),
            **kw,
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


def lc_embeddings(embedder: LocalEmbedder) -> Any:
    from langchain_core.embeddings import Embeddings

    class RagsondeEmbeddings(Embeddings):
        """LangChain embeddings over ragsonde's own local model."""

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed_documents(texts).tolist()

        def embed_query(self, text: str) -> list[float]:
            return embedder.embed_queries([text])[0].tolist()

    return RagsondeEmbeddings()


def li_embeddings(embedder: LocalEmbedder) -> Any:
    from llama_index.core.embeddings import BaseEmbedding

    class RagsondeEmbedding(BaseEmbedding):
        """LlamaIndex embeddings over ragsonde's own local model."""

        def _get_query_embedding(self, query: str) -> list[float]:
            return embedder.embed_queries([query])[0].tolist()

        def _get_text_embedding(self, text: str) -> list[float]:
            return embedder.embed_documents([text])[0].tolist()

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed_documents(texts).tolist()

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

    return RagsondeEmbedding(model_name="ragsonde-local")


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
