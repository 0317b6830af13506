"""Inverse Cloze Task queries, and the copy of the collection they are evaluated on.

ICT (Lee, Chang and Toutanova, "Latent Retrieval for Weakly Supervised Open Domain Question
Answering", ACL 2019): the query is one sentence of a chunk, and that sentence is *removed* from
the chunk, so the chunk must be found by its context, not by the query's own words. A sentence
query against a collection that still holds the sentence is the sentence-copy shortcut that made
every offline method rank BM25 first.

:class:`IctSentence` picks the sentence (uniformly among the chunk's sentences of at least
``min_words`` words, from chunks of at least two sentences, so context is left). The query is the
sentence as written; the entry's ``relevant`` is its document, as for every generated query.
:func:`build_ict_copy` then copies the collection with tune's copy function
(:func:`ragsonde.tune.variants.build_tuned_copy`, through the store interface) and rewrites each
source chunk without its sentence: text, dense vector and BM25 vector re-encoded as ingest would
(the ``title: section`` prefix kept when the chunk was embedded with one, BM25 with the
collection's recorded parameters). The benchmark is evaluated on that copy: ``generate --method
ict`` writes it beside the benchmark and names it; :func:`ict_copy` is the temporary form.

The copy is ragsonde's (:mod:`ragsonde.models.derived`): every point carries the stamp of what it
was derived from, and each rewritten chunk records its edit (the sentence removed, the hash of the
text written), so the integrity check counts only damage, and :func:`ict_inputs` lets a re-run
reuse a copy made from the same inputs.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragsonde.embedders import Embedder
from ragsonde.errors import RagsondeError
from ragsonde.labels.models import BenchmarkEntry
from ragsonde.labels.sampling import Chunk
from ragsonde.labels.spans import Made, MakesQueries, sentence_spans
from ragsonde.models.derived import COPY_KEY, EDIT_KEY, DerivedCopy, Edit, text_sha256
from ragsonde.models.points import PointRecord
from ragsonde.models.store import Store

__all__ = [
    "ICT_METHOD",
    "IctSentence",
    "build_ict_copy",
    "ict_copy",
    "ict_copy_whole",
    "ict_inputs",
    "without_sentence",
]

ICT_METHOD = "ict"
_BM25_LABEL = re.compile(r"^bm25-k([0-9.]+)-b([0-9.]+)(?:-t(\d+))?(?:-([a-z]+))?$")


def without_sentence(text: str, sentence: str) -> str:
    """``text`` with ``sentence`` taken out once (and the space it leaves closed up)."""
    at = text.find(sentence)
    if at < 0:
        return text
    return re.sub(r"\s{2,}", " ", (text[:at] + text[at + len(sentence) :])).strip()


@dataclass
class IctSentence(MakesQueries):
    """An offline method (:class:`~.offline.QueryMaker`): one sentence of the chunk, verbatim
    (``at``: its span in the chunk, the answer's span in the original document)."""

    min_words: int = 6

    def fit(self, chunks: Sequence[Chunk]) -> IctSentence:
        return self

    def make(self, chunk: Chunk, rng: np.random.Generator) -> Made | None:
        spans = sentence_spans(chunk.text)
        if len(spans) < 2:  # nothing would be left to find the chunk by
            return None
        usable = [(s, e) for s, e in spans if len(chunk.text[s:e].split()) >= self.min_words]
        if not usable:
            return None
        s, e = usable[int(rng.integers(len(usable)))]
        return Made(chunk.text[s:e], (s, e))


def _bm25_encoder(payload: dict[str, Any]) -> Any:
    """The collection's BM25 encoder: the parameters its payload's ``bm25`` label records."""
    from ragsonde.embedders.sparse import Bm25Encoder
    from ragsonde.models.index import Bm25Params

    m = _BM25_LABEL.match(str(payload.get("bm25") or ""))
    if m is None:
        return Bm25Encoder.for_params(Bm25Params())
    k1, b, t, lang = m.groups()
    params = Bm25Params(k1=float(k1), b=float(b), title_weight=int(t or 0))
    if lang:
        params = params.model_copy(update={"language": lang})
    return Bm25Encoder.for_params(params)


def _edited(points: Sequence[PointRecord], entries: Sequence[BenchmarkEntry]) -> list[str]:
    """For each point, the text to embed once its query sentence is removed."""
    from ragsonde.ingest.pipeline import encoded_text

    sentence = {e.source_chunk: e.query for e in entries}
    out = []
    for p in points:
        old = str(p.payload.get("text") or "")
        embedded = encoded_text(p.payload)
        prefix = embedded[: len(embedded) - len(old)] if embedded.endswith(old) else ""
        out.append(prefix + without_sentence(old, sentence[p.id]))
    return out


def ict_inputs(chunks: Sequence[Chunk], entries: Sequence[BenchmarkEntry], embedder: str) -> str:
    """A digest of what an ICT copy depends on: every source chunk (id and text), each query
    sentence and the chunk it leaves, and the embedder that re-embeds them."""
    h = hashlib.sha256()
    for c in sorted(chunks, key=lambda c: c.id):
        h.update(json.dumps([c.id, text_sha256(c.text)]).encode())
    for e in entries:
        h.update(json.dumps([e.source_chunk, e.query]).encode())
    h.update(embedder.encode())
    return h.hexdigest()[:32]


def build_ict_copy(
    store: Store,
    embedder: Embedder,
    collection: str,
    target: str,
    entries: Sequence[BenchmarkEntry],
    *,
    inputs: str = "",
    seed: int | None = None,
) -> int:
    """Copy ``collection`` to ``target`` and remove each ICT entry's sentence from its source
    chunk, re-embedded; return how many chunks were rewritten. Every point is stamped as derived
    (``inputs``: :func:`ict_inputs`), each rewritten chunk records its edit. Never writes to
    ``collection``; refuses an existing ``target`` (VALIDATION_ERROR)."""
    from ragsonde.tune.variants import VariantSpec, build_tuned_copy

    stamp = {
        COPY_KEY: DerivedCopy(
            of=collection, method=ICT_METHOD, inputs=inputs, seed=seed
        ).model_dump(exclude_none=True)
    }
    build_tuned_copy(store, collection, target, VariantSpec(), extra_payload=stamp)
    try:
        ids = [e.source_chunk for e in entries if e.source_chunk]
        points = store.retrieve(collection, ids)
        if not points:
            return 0
        texts = _edited(points, entries)
        dense = embedder.embed_documents(texts)
        sparse: list[Any] = [None] * len(points)
        if store.collection_info(collection).sparse_vector_name:
            titles = [p.payload.get("title") for p in points]
            sparse = _bm25_encoder(points[0].payload).embed_chunks(texts, titles)
        sentence = {e.source_chunk: e.query for e in entries}
        rewritten = []
        for p, d, s in zip(points, dense, sparse, strict=True):
            text = without_sentence(str(p.payload.get("text")), sentence[p.id])
            edit = Edit(method=ICT_METHOD, removed=sentence[p.id], text_sha256=text_sha256(text))
            payload = {**p.payload, **stamp, EDIT_KEY: edit.model_dump(), "text": text}
            rewritten.append(PointRecord(p.id, [float(x) for x in d], payload, s))
        store.upsert(target, rewritten)
        store.build_index(target)
    except BaseException:
        with contextlib.suppress(RagsondeError):  # never leave half a copy behind
            store.delete_collection(target)
        raise
    return len(rewritten)


def ict_copy_whole(
    store: Store, collection: str, target: str, entries: Sequence[BenchmarkEntry]
) -> bool:
    """Whether ``target`` holds every point of ``collection`` and every source chunk of
    ``entries`` carries its edit. A build killed outright (SIGKILL, power cut: no ``except``
    runs) leaves a copy stamped like a whole one but short of points or of edits; reused, it
    would be evaluated as if whole."""
    if store.count(target) != store.count(collection):
        return False
    ids = [e.source_chunk for e in entries if e.source_chunk]
    edited = {p.id for p in store.retrieve(target, ids) if EDIT_KEY in p.payload}
    return edited >= set(ids) & {p.id for p in store.retrieve(collection, ids)}


@contextlib.contextmanager
def ict_copy(
    store: Store,
    embedder: Embedder,
    collection: str,
    entries: Sequence[BenchmarkEntry],
    *,
    target: str | None = None,
) -> Iterator[str]:
    """:func:`build_ict_copy` into a temporary collection, deleted on exit; yields its name."""
    name = target or f"{collection}-ict-tmp"
    build_ict_copy(store, embedder, collection, name, entries)
    try:
        yield name
    finally:
        with contextlib.suppress(RagsondeError):
            store.delete_collection(name)
