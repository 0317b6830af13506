"""Helpers for the framework tests (fixtures: conftest.py)."""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsonde.config import Settings
from ragsonde.embedders import Embedder

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


def lc_embeddings(embedder: Embedder) -> Any:
    from langchain_core.embeddings import Embeddings

    class RagsondeEmbeddings(Embeddings):
        """LangChain embeddings over ragsonde's own local model."""

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed_documents(texts).tolist()

        def embed_query(self, text: str) -> list[float]:
            return embedder.embed_queries([text])[0].tolist()

    return RagsondeEmbeddings()


def li_embeddings(embedder: Embedder) -> Any:
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


def framework_search(
    b: Built, embedder: Embedder, queries: list[str], k: int
) -> list[list[tuple[str, float]]]:
    """Top-k (point id, score) per query from the framework's own similarity search
    (Haystack's id is its document id, kept in the payload as ``id``)."""
    out: list[list[tuple[str, float]]] = []
    if b.framework == "langchain":
        from langchain_qdrant import QdrantVectorStore

        store = QdrantVectorStore.from_existing_collection(
            embedding=lc_embeddings(embedder), path=str(b.path), collection_name=b.collection
        )
        try:
            for q in queries:
                hits = store.similarity_search_with_score(q, k=k)
                out.append([(d.metadata["_id"], s) for d, s in hits])
        finally:
            store.client.close()
    elif b.framework == "llamaindex":
        from llama_index.core import VectorStoreIndex
        from llama_index.vector_stores.qdrant import QdrantVectorStore
        from qdrant_client import QdrantClient

        client = QdrantClient(path=str(b.path))
        try:
            index = VectorStoreIndex.from_vector_store(
                QdrantVectorStore(client=client, collection_name=b.collection),
                embed_model=li_embeddings(embedder),
            )
            retriever = index.as_retriever(similarity_top_k=k)
            for q in queries:
                out.append([(n.node.node_id, float(n.score)) for n in retriever.retrieve(q)])
        finally:
            client.close()
    else:
        from haystack_integrations.components.retrievers.qdrant import QdrantEmbeddingRetriever
        from haystack_integrations.document_stores.qdrant import QdrantDocumentStore

        store = QdrantDocumentStore(
            path=str(b.path),
            index=b.collection,
            embedding_dim=embedder.dimension,
            similarity="cosine",
        )
        try:
            retriever = QdrantEmbeddingRetriever(document_store=store, top_k=k)
            for q in queries:
                docs = retriever.run(query_embedding=embedder.embed_queries([q])[0].tolist())
                out.append([(d.id, float(d.score)) for d in docs["documents"]])
        finally:
            store._client.close()
    return out


def lc_sparse(kind: str) -> Any:
    """LangChain sparse embeddings of ``kind``: ``bm25``, the Qdrant engine's BM25 (ragsonde's own
    encoder, which FastEmbed's ``Qdrant/bm25`` is meant to match), or ``hashing``, each word's
    CRC32 bucket counted (a hashing vectorizer: a sparse space no BM25 query shares, as SPLADE's
    or BM42's are not)."""
    import re
    import zlib

    from langchain_qdrant.sparse_embeddings import SparseEmbeddings, SparseVector

    from ragsonde.embedders.sparse import Bm25Encoder

    bm25 = Bm25Encoder()

    def hashed(text: str) -> SparseVector:
        counts: dict[int, float] = {}
        for word in re.findall(r"\w+", text.lower()):
            bucket = zlib.crc32(word.encode()) % (1 << 20)
            counts[bucket] = counts.get(bucket, 0.0) + 1.0
        return SparseVector(indices=list(counts), values=list(counts.values()))

    class Sparse(SparseEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[SparseVector]:
            if kind == "hashing":
                return [hashed(t) for t in texts]
            return [
                SparseVector(indices=v.indices, values=v.values)
                for v in bm25.embed_documents(texts)
            ]

        def embed_query(self, text: str) -> SparseVector:
            if kind == "hashing":
                return hashed(text)
            v = bm25.embed_queries([text])[0]
            return SparseVector(indices=v.indices, values=v.values)

    return Sparse()


def titles_benchmark(b: Built, tmp_path: Path, n: int = 6) -> Path:
    """Each of the first ``n`` abstracts' title as a known-item query, its BEIR id (text) as the
    relevant id: ``titles.jsonl`` in ``tmp_path``."""
    path = tmp_path / "titles.jsonl"
    path.write_text(
        "".join(
            json.dumps({"query_id": f"t{r['_id']}", "query": r["title"], "relevant": [r["_id"]]})
            + "\n"
            for r in b.rows[:n]
        ),
        encoding="utf-8",
    )
    return path


def client_collection(folder: Path, name: str, vectors_config: Any, points: list[Any]) -> None:
    """A collection ``name`` written by qdrant-client in local mode at ``folder``, as a user's
    own pipeline writes one: created with ``vectors_config``, ``points`` upserted, closed."""
    from qdrant_client import QdrantClient

    client = QdrantClient(path=str(folder))
    try:
        client.create_collection(name, vectors_config=vectors_config)
        client.upsert(name, points)
    finally:
        client.close()
