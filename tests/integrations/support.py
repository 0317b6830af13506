"""Helpers for the framework tests (fixtures: conftest.py)."""

from __future__ import annotations

import contextlib
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
