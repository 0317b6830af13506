"""The offline generator: known-item queries sampled from a chunk's discriminative terms.

Method (after Azzopardi, de Rijke and Balog, "Building simulated queries for known-item topics",
SIGIR 2007): a user who wants a document they have seen types a few of its words, and the words
they remember are the ones that set it apart. For each sampled chunk we draw a query length
``L ~ 2 + Poisson(lam)`` (capped), then ``L`` distinct terms without replacement with probability
proportional to the term's tf-idf weight in the chunk (the "discriminative" term model), the idf
taken over the whole collection; with probability ``noise`` a term is instead drawn from the
collection's background distribution (the paper's lambda), which the user half-remembers. The
terms are written in the order they occur in the chunk, so the query reads like one. The chunk's
document is the known item (grade 3).

Why this method: it needs no model and no network, it is reproducible with a seed, and it has been
validated: Azzopardi et al. found that system rankings under discriminative simulated queries
correlate with rankings under real known-item queries. Its known bias is lexical: the query shares
the document's words, which favours BM25 over dense retrieval; ``bench/bench_labels.py`` measures
how far the system order it gives agrees with SciFact's human labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ragsonde.labels.models import BenchmarkEntry
from ragsonde.labels.sampling import Chunk

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import TfidfVectorizer

__all__ = ["OFFLINE_GENERATOR", "TermSampler", "generate_offline"]

OFFLINE_GENERATOR = "offline:tfidf-known-item"
_WORD_PATTERN = r"(?u)\b[^\W\d_][\w-]*[^\W_]\b"  # words of 2+ characters, no bare numbers


def _vectorizer() -> TfidfVectorizer:
    try:
        from sklearn.feature_extraction.text import TfidfVectorizer
    except ImportError as e:  # pragma: no cover - depends on the install
        from ragsonde.errors import QueryValidationError

        raise QueryValidationError(
            "The offline generator needs scikit-learn: pip install 'ragsonde[labels]'.",
            field="generator",
        ) from e
    return TfidfVectorizer(token_pattern=_WORD_PATTERN, stop_words="english", sublinear_tf=True)


@dataclass
class TermSampler:
    """Fit on the collection's chunks; then :meth:`query` for one chunk."""

    lam: float = 3.0
    max_terms: int = 8
    noise: float = 0.1

    def fit(self, chunks: Sequence[Chunk]) -> TermSampler:
        self._vec = _vectorizer()
        matrix = self._vec.fit_transform([c.text for c in chunks])
        self._index = {c.id: i for i, c in enumerate(chunks)}
        self._matrix = matrix.tocsr()
        self._terms = self._vec.get_feature_names_out()
        df = np.asarray((matrix > 0).sum(axis=0)).ravel().astype(np.float64)
        self._background = df / df.sum()
        return self

    def query(self, chunk: Chunk, rng: np.random.Generator) -> str | None:
        row = self._matrix.getrow(self._index[chunk.id])
        idx, weights = row.indices, row.data
        if len(idx) < 2:
            return None
        length = int(min(self.max_terms, len(idx), 2 + rng.poisson(self.lam)))
        chosen: set[int] = set()
        p = weights / weights.sum()
        while len(chosen) < length:
            if rng.random() < self.noise:
                chosen.add(int(rng.choice(len(self._background), p=self._background)))
            else:
                chosen.add(int(idx[rng.choice(len(idx), p=p)]))
        words = [str(self._terms[i]) for i in chosen]
        lowered = chunk.text.lower()
        words.sort(key=lambda w: (lowered.find(w) if w in lowered else len(lowered), w))
        return " ".join(words)


def generate_offline(
    chunks: Sequence[Chunk],
    sample: Sequence[Chunk],
    *,
    seed: int,
    prefix: str = "gen",
    sampler: TermSampler | None = None,
) -> list[BenchmarkEntry]:
    """One known-item query per sampled chunk, its document relevant (grade 3)."""
    ts = (sampler or TermSampler()).fit(chunks)
    rng = np.random.default_rng(seed)
    out: list[BenchmarkEntry] = []
    for n, c in enumerate(sample):
        text = ts.query(c, rng)
        if not text:
            continue
        out.append(
            BenchmarkEntry.known_item(
                f"{prefix}-{n:05d}",
                text,
                doc_id=c.doc_id,
                chunk_id=c.id,
                generator=OFFLINE_GENERATOR,
                judge=OFFLINE_GENERATOR,
            )
        )
    return out
