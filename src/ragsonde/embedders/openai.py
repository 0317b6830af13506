"""Any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, Ollama, vLLM, TEI).

Selected with ``openai:<model>``.

Base URL: ``OPENAI_BASE_URL`` (default ``https://api.openai.com/v1``); key: ``OPENAI_API_KEY``
(optional: local servers need none).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragsonde.config import Settings
from ragsonde.embedders._http import JsonPoster
from ragsonde.embedders._vectors import to_vectors
from ragsonde.embedders.base import Vectors
from ragsonde.errors import EmbeddingError

__all__ = ["OPENAI_DIMENSIONS", "OpenAIEmbedder"]

OPENAI_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
_BATCH = 256


class OpenAIEmbedder:
    """Embeds through ``POST {base}/embeddings``; rows are ordered by their ``index``."""

    def __init__(self, model: str, poster: JsonPoster) -> None:
        self._model = model
        self._poster = poster
        self._dimension = OPENAI_DIMENSIONS.get(model)

    @classmethod
    def from_settings(cls, model: str, settings: Settings) -> OpenAIEmbedder:
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
        headers = {"Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        poster = JsonPoster(
            "OpenAI-compatible embeddings API",
            settings.openai_base_url,
            headers=headers,
            secret=key,
            timeout_s=settings.embed_timeout_s,
            max_retries=settings.embed_max_retries,
            deadline_s=settings.embed_deadline_s,
            deadline_setting="RAGSONDE_EMBED_DEADLINE_S",
            timeout_setting="RAGSONDE_EMBED_TIMEOUT_S",
            key_hint="OPENAI_API_KEY",
        )
        return cls(model, poster)

    @property
    def name(self) -> str:
        return f"openai:{self._model}"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self.embed_queries(["dimension probe"])
        if self._dimension is None:
            raise EmbeddingError(f"Model '{self._model}' did not report a vector size.")
        return self._dimension

    def _embed(self, texts: Sequence[str]) -> Vectors:
        parts = []
        deadline = self._poster.deadline()  # one deadline for the whole call
        for start in range(0, len(texts), _BATCH):
            chunk = list(texts[start : start + _BATCH])
            body = self._poster.post(
                "/embeddings",
                {"model": self._model, "input": chunk, "encoding_format": "float"},
                deadline=deadline,
            )
            data = body.get("data") if isinstance(body, dict) else None
            if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
                raise EmbeddingError("The embeddings API answered without a 'data' list.")
            try:
                rows = [d["embedding"] for d in sorted(data, key=lambda d: int(d["index"]))]
            except (KeyError, TypeError, ValueError) as e:
                raise EmbeddingError(
                    "The embeddings API sent items without index/embedding."
                ) from e
            vecs = to_vectors(
                rows, expected=len(chunk), api="Embeddings API", dimension=self._dimension
            )
            self._dimension = int(vecs.shape[1])
            parts.append(vecs)
        if not parts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        return np.concatenate(parts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts)

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self._embed(texts)
