"""BM25 sparse vectors, for ``mode=sparse`` and ``mode=hybrid``.

The tokenizer, stemmer and term weighting are the Qdrant engine's own (``qdrant_edge.Bm25``):
documents carry their BM25 term-frequency part, queries their terms, and the collection's sparse
vector has the IDF modifier, so Qdrant computes the IDF from the collection itself. The same
vectors work on the embedded store and on a Qdrant server.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ragsonde.errors import EmbeddingError
from ragsonde.store.base import SparseVector

__all__ = ["SPARSE_VECTOR_NAME", "Bm25Encoder"]

#: The name of the sparse vector in collections ingested with ``--sparse``.
SPARSE_VECTOR_NAME = "bm25"


class Bm25Encoder:
    """Text -> BM25 sparse vector. ``avg_len``: the corpus's average document length in tokens."""

    name = "qdrant-bm25"

    def __init__(self, avg_len: float = 256.0, k: float = 1.2, b: float = 0.75) -> None:
        self.avg_len = avg_len
        self.k = k
        self.b = b
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import qdrant_edge as qe
                except ImportError as e:
                    raise EmbeddingError(
                        "BM25 vectors need qdrant-edge-py: pip install 'qdrant-edge-py>=0.9,<0.10'."
                    ) from e
                self._model = qe.Bm25(qe.Bm25Config(k=self.k, b=self.b, avg_len=self.avg_len))
        return self._model

    @staticmethod
    def _convert(vec: Any) -> SparseVector:
        return SparseVector(indices=list(vec.indices), values=[float(v) for v in vec.values])

    def embed_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        model = self._load()
        return [self._convert(model.embed_document(t)) for t in texts]

    def embed_queries(self, texts: Sequence[str]) -> list[SparseVector]:
        model = self._load()
        return [self._convert(model.embed_query(t)) for t in texts]
