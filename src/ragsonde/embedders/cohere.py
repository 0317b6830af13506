"""Cohere embeddings (``cohere:embed-english-v3.0``, 1024-dim) over Cohere's v2 REST API.

Queries are sent with ``input_type=search_query``, documents with ``search_document``; up to 96
texts per call (Cohere's limit). Key: ``COHERE_API_KEY``; base URL: ``RAGSONDE_COHERE_BASE_URL``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragsonde.config import Settings
from ragsonde.embedders._http import JsonPoster
from ragsonde.embedders._vectors import to_vectors
from ragsonde.embedders.base import Vectors
from ragsonde.errors import AuthError, EmbeddingError

__all__ = ["COHERE_DIMENSIONS", "CohereEmbedder"]

#: Known models and their vector sizes; others are learned from the first response.
COHERE_DIMENSIONS = {
    "embed-english-v3.0": 1024,
    "embed-multilingual-v3.0": 1024,
    "embed-english-light-v3.0": 384,
    "embed-multilingual-light-v3.0": 384,
}
_BATCH = 96


class CohereEmbedder:
    """Embeds through ``POST {base}/v2/embed``."""

    def __init__(self, model: str, poster: JsonPoster) -> None:
        self._model = model
        self._poster = poster
        self._dimension = COHERE_DIMENSIONS.get(model)

    @classmethod
    def from_settings(cls, model: str, settings: Settings) -> CohereEmbedder:
        key = settings.cohere_api_key.get_secret_value() if settings.cohere_api_key else None
        if not key:
            raise AuthError("The Cohere embedder needs an API key: set COHERE_API_KEY.")
        poster = JsonPoster(
            "Cohere",
            settings.cohere_base_url,
            headers={"Authorization": f"Bearer {key}", "Accept": "application/json"},
            secret=key,
            timeout_s=settings.embed_timeout_s,
            max_retries=settings.embed_max_retries,
            deadline_s=settings.embed_deadline_s,
            deadline_setting="RAGSONDE_EMBED_DEADLINE_S",
            timeout_setting="RAGSONDE_EMBED_TIMEOUT_S",
            key_hint="COHERE_API_KEY",
        )
        return cls(model, poster)

    @property
    def name(self) -> str:
        return f"cohere:{self._model}"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._embed(["dimension probe"], "search_query")
        if self._dimension is None:
            raise EmbeddingError(f"Cohere model '{self._model}' did not report a vector size.")
        return self._dimension

    def _embed(self, texts: Sequence[str], input_type: str) -> Vectors:
        parts = []
        deadline = self._poster.deadline()  # one deadline for the whole call
        for start in range(0, len(texts), _BATCH):
            chunk = list(texts[start : start + _BATCH])
            body = self._poster.post(
                "/v2/embed",
                {
                    "model": self._model,
                    "texts": chunk,
                    "input_type": input_type,
                    "embedding_types": ["float"],
                },
                deadline=deadline,
            )
            rows = body.get("embeddings", {}).get("float") if isinstance(body, dict) else None
            vecs = to_vectors(rows, expected=len(chunk), api="Cohere", dimension=self._dimension)
            self._dimension = int(vecs.shape[1])
            parts.append(vecs)
        if not parts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        return np.concatenate(parts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, "search_query")

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts, "search_document")
