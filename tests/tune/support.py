"""Helpers for the tune tests: a SciFact slice, and clustered vectors (fixtures: conftest.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ragsonde.embedders.sparse import SPARSE_VECTOR_NAME, Bm25Encoder
from ragsonde.models.points import PointRecord
from ragsonde.models.store import Store
from ragsonde.testing import beir_slice

SLICE_QUERIES = 25
SLICE_EXTRA = 250


def make_slice(scifact: Path, folder: Path, n_queries: int, n_extra: int) -> Path:
    """A BEIR folder: the first ``n_queries`` test queries, their documents, ``n_extra`` others."""
    return beir_slice(scifact, folder, n_queries, n_extra)


def _halves(doc: dict[str, str]) -> list[str]:
    """Two chunks per document (title + each half of the abstract), so that how chunks are
    aggregated into documents matters."""
    words = doc["text"].split()
    mid = max(1, len(words) // 2)
    return [f"{doc['title']} {' '.join(part)}".strip() for part in (words[:mid], words[mid:])]


def fill_from_slice(store: Store, name: str, folder: Path, embedder) -> int:
    """Two points per document, dense and BM25, ``doc_id`` in the payload; returns the points."""
    rows = [json.loads(x) for x in (folder / "corpus.jsonl").read_text().splitlines() if x]
    docs = [d for d in rows for _ in range(2)]
    texts = [t for d in rows for t in _halves(d)]
    dense = embedder.embed_documents(texts)
    sparse = Bm25Encoder().embed_documents(texts)
    store.create_collection(
        name,
        embedder.dimension,
        sparse_vector_name=SPARSE_VECTOR_NAME,
        indexed_fields={"doc_id": "keyword"},
    )
    store.upsert(
        name,
        [
            PointRecord(str(i), dense[i].tolist(), {"doc_id": d["_id"], "text": t}, sparse[i])
            for i, (d, t) in enumerate(zip(docs, texts, strict=True))
        ],
    )
    store.build_index(name)
    return len(texts)


def clustered(n: int = 600, dim: int = 64, seed: int = 7) -> np.ndarray:
    """Unit vectors in 12 loose clusters: neighbours are close, so ANN errors show."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((12, dim))
    x = centres[rng.integers(0, 12, n)] + 0.6 * rng.standard_normal((n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
