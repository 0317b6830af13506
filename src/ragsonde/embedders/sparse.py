"""BM25 sparse vectors, for ``mode=sparse`` and ``mode=hybrid``.

The tokenizer, stemmer and term weighting are the Qdrant engine's own (``qdrant_edge.Bm25``):
documents carry their BM25 term-frequency part, queries their terms, and the collection's sparse
vector has the IDF modifier, so Qdrant computes the IDF from the collection itself. The same
vectors work on the embedded store and on a Qdrant server.

A document's vector may count its title more than once (:attr:`Bm25Params.title_weight`, a
BM25F-style field boost): :func:`bm25_document_text` is the one place that text is made, for
ingest and for tune's re-encoded variants alike.

The language (:attr:`Bm25Params.language`: stopwords and stemmer) must be the same on both sides:
a collection ingested with a non-English one records it in each chunk's ``bm25`` label, and
:func:`query_language` picks the language a collection's queries are encoded with.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from ragsonde.errors import EmbeddingError, QueryValidationError
from ragsonde.models.index import DEFAULT_BM25_LANGUAGE, Bm25Params
from ragsonde.models.points import SparseVector

__all__ = [
    "BM25_AGREEMENT_MIN",
    "SPARSE_VECTOR_NAME",
    "Bm25Encoder",
    "bm25_agreement",
    "bm25_document_text",
    "query_encoder",
    "query_language",
    "recorded_language",
]

#: The name of the sparse vector in collections ingested with ``--sparse``.
SPARSE_VECTOR_NAME = "bm25"
#: Below this share of its terms found in the stored sparse vectors (:func:`bm25_agreement`), a
#: collection's sparse vector was not made by a BM25 that ragsonde's queries can search.
BM25_AGREEMENT_MIN = 0.5


def bm25_document_text(text: str, title: str | None, title_weight: int) -> str:
    """The text a chunk's BM25 vector is encoded from: its ``title`` on ``title_weight`` lines
    of its own, then ``text`` (the text its dense vector was embedded from). No title, or a
    weight of 0: ``text`` unchanged."""
    if not title or title_weight <= 0:
        return text
    return "\n".join([title] * title_weight + [text])


def recorded_language(payload: Mapping[str, Any]) -> str | None:
    """The BM25 language a chunk's payload records: its ``bm25`` label's (non-default BM25
    parameters), English for a chunk ragsonde ingested with the defaults (an ``embed_hash`` and
    no label), ``None`` for a chunk another pipeline wrote (it records nothing)."""
    label = payload.get("bm25")
    language = Bm25Params.language_of_label(label) if isinstance(label, str) else None
    if language is not None:
        return language
    return DEFAULT_BM25_LANGUAGE if "embed_hash" in payload else None


def query_language(collection: str, recorded: str | None, setting: str | None) -> str:
    """The language ``collection``'s queries are BM25-encoded with: the one its chunks record
    (``recorded``), else the ``bm25_language`` setting, else English. A setting that contradicts
    the record is a VALIDATION_ERROR: queries tokenized in one language and documents in another
    match silently fewer terms."""
    if recorded is None:
        return setting or DEFAULT_BM25_LANGUAGE
    if setting is not None and setting != recorded:
        raise QueryValidationError(
            f"Collection '{collection}' has BM25 vectors built for {recorded}, but the "
            "index.bm25_language setting (RAGSONDE_INDEX__BM25_LANGUAGE, --bm25-language) is "
            f"{setting}. "
            f"Unset the setting to query in {recorded}, or re-ingest the collection with "
            f"--bm25-language {setting}.",
            field="index.bm25_language",
        )
    return recorded


class Bm25Encoder:
    """Text -> BM25 sparse vector. ``avg_len``: the corpus's average document length in tokens."""

    name = "qdrant-bm25"

    def __init__(
        self,
        avg_len: float = 256.0,
        k: float = 1.2,
        b: float = 0.75,
        title_weight: int = 0,
        language: str = DEFAULT_BM25_LANGUAGE,
    ) -> None:
        self.avg_len = avg_len
        self.k = k
        self.b = b
        self.title_weight = title_weight
        self.language = language
        self._model: Any = None
        self._lock = threading.Lock()

    @classmethod
    def for_params(cls, params: Bm25Params) -> Bm25Encoder:
        """The encoder of ``params``: ``k1``, ``b`` and the language, and the title weight that
        :meth:`embed_chunks` applies."""
        return cls(
            k=params.k1, b=params.b, title_weight=params.title_weight, language=params.language
        )

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    import qdrant_edge as qe
                except ImportError as e:
                    raise EmbeddingError(
                        "BM25 vectors need qdrant-edge-py: pip install 'qdrant-edge-py>=0.9,<0.10'."
                    ) from e
                config = qe.Bm25Config(
                    k=self.k, b=self.b, avg_len=self.avg_len, language=self.language
                )
                try:
                    self._model = qe.Bm25(config)
                except ValueError as e:  # the engine's "unsupported language"
                    raise QueryValidationError(
                        f"BM25 cannot tokenize {self.language!r}: {e}.", field="bm25_language"
                    ) from e
        return self._model

    @staticmethod
    def _convert(vec: Any) -> SparseVector:
        return SparseVector(indices=list(vec.indices), values=[float(v) for v in vec.values])

    def embed_documents(self, texts: Sequence[str]) -> list[SparseVector]:
        model = self._load()
        return [self._convert(model.embed_document(t)) for t in texts]

    def embed_chunks(
        self, texts: Sequence[str], titles: Sequence[str | None]
    ) -> list[SparseVector]:
        """Chunks' BM25 vectors: each text with its title counted ``title_weight`` extra times
        (:func:`bm25_document_text`)."""
        weighted = [
            bm25_document_text(t, title, self.title_weight)
            for t, title in zip(texts, titles, strict=True)
        ]
        return self.embed_documents(weighted)

    def embed_queries(self, texts: Sequence[str]) -> list[SparseVector]:
        model = self._load()
        return [self._convert(model.embed_query(t)) for t in texts]


def bm25_agreement(
    chunks: Sequence[tuple[SparseVector | None, str]], encoder: Bm25Encoder
) -> float | None:
    """The share of the BM25 terms ``encoder`` finds in each chunk's text that the chunk's stored
    sparse vector holds, over ``chunks`` (``(stored vector, text)``): about 1 when the vectors
    are this BM25 (extra stored terms, e.g. a title counted in, do not lower it), near 0 when
    another encoder made them (SPLADE's or BM42's token ids, a hashing vectorizer's buckets),
    whose index space ragsonde's BM25 queries do not share. ``None`` when no chunk has both a
    stored vector and text with a term."""
    pairs = [(v, t) for v, t in chunks if v is not None and t.strip()]
    if not pairs:
        return None
    found = total = 0
    for (stored, _), mine in zip(
        pairs, encoder.embed_documents([t for _, t in pairs]), strict=True
    ):
        held = set(stored.indices)
        total += len(mine.indices)
        found += sum(1 for i in mine.indices if i in held)
    return found / total if total else None


@functools.cache
def query_encoder(language: str = DEFAULT_BM25_LANGUAGE) -> Bm25Encoder:
    """The BM25 encoder of ``language`` for queries, made once per process and shared (the
    retriever, tune and explain encode queries with it; only the language varies, by what the
    collection records: :func:`query_language`)."""
    return Bm25Encoder(language=language)
