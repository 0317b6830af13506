from __future__ import annotations

import pytest

from ragsonde.retriever import Retriever
from ragsonde.store import PointRecord, open_store
from tests.conftest import DOCS

INDEXED = {"url": "keyword", "section": "keyword", "doc_id": "keyword"}


def fill(store, embedder, name: str = "docs") -> None:
    store.create_collection(name, embedder.dimension, indexed_fields=INDEXED)
    vecs = embedder.embed_documents([d[2] for d in DOCS])
    store.upsert(
        name,
        [
            PointRecord(
                id=str(i + 1),
                vector=vecs[i].tolist(),
                payload={
                    "text": text,
                    "url": f"https://docs.example/{doc}",
                    "title": doc.upper(),
                    "section": section,
                    "chunk_index": 0,
                    "doc_id": doc,
                    "created_at": "2026-01-01T00:00:00+00:00",
                    "lang": "en",
                },
            )
            for i, (doc, section, text) in enumerate(DOCS)
        ],
    )


@pytest.fixture
def retriever(store_settings, embedder):
    store = open_store(store_settings)
    fill(store, embedder)
    r = Retriever(store_settings, store=store, embedder=embedder)
    yield r
    store.close()
