"""Chunks sampled across a collection, stratified by document and by section.

The collection is read once through the store interface (``scroll``, payloads only). Strata are
documents, and within a document its sections: documents are visited in a seeded random order,
one chunk each per round, and each document hands out its sections in turn before it repeats one.
So 200 samples from 1,000 documents are 200 different documents, and 200 from 20 documents spread
over every section of each instead of piling up in the longest page.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass

from ragsonde.models.store import Store
from ragsonde.models.unread import id_text, text_of

__all__ = ["Chunk", "read_chunks", "stratified_sample"]

#: Shorter chunks (a heading, a link list) make no useful query.
MIN_CHARS = 80


@dataclass(frozen=True)
class Chunk:
    id: str
    doc_id: str
    section: str
    title: str
    text: str
    chunk_index: int
    start: int | None = None
    """The chunk's span in its parsed document (``start``/``end`` of a chunk ragsonde
    ingested); None in a collection without spans."""
    end: int | None = None


def _offset(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def read_chunks(store: Store, collection: str) -> list[Chunk]:
    """Every chunk of ``collection`` with its text (raises CollectionNotFoundError)."""
    store.collection_info(collection)
    out: list[Chunk] = []
    for batch in store.scroll(collection, batch_size=512):
        for p in batch:
            pl = p.payload
            # a value of another type (a list, an object) is absent, never its Python spelling;
            # a chunk_index "x" or [1] failed with a traceback (ragsonde.models.unread)
            doc = id_text(pl.get("doc_id")) or text_of(pl.get("url")) or p.id
            out.append(
                Chunk(
                    id=p.id,
                    doc_id=doc,
                    section=text_of(pl.get("section")) or "",
                    title=text_of(pl.get("title")) or "",
                    text=text_of(pl.get("text")) or "",
                    chunk_index=_offset(pl.get("chunk_index")) or 0,
                    start=_offset(pl.get("start")),
                    end=_offset(pl.get("end")),
                )
            )
    out.sort(key=lambda c: (c.doc_id, c.chunk_index, c.id))  # scroll order is not a contract
    return out


def stratified_sample(
    chunks: list[Chunk], n: int, seed: int, *, min_chars: int = MIN_CHARS
) -> list[Chunk]:
    """Up to ``n`` chunks: round-robin over documents, and over sections within each document."""
    rng = random.Random(seed)  # noqa: S311 - a seeded sample, not a secret
    by_doc: dict[str, dict[str, list[Chunk]]] = defaultdict(lambda: defaultdict(list))
    for c in chunks:
        if len(c.text.strip()) >= min_chars:
            by_doc[c.doc_id][c.section].append(c)
    docs = sorted(by_doc)
    rng.shuffle(docs)
    # Each document: its sections in a random order, each section's chunks shuffled.
    queues: dict[str, list[list[Chunk]]] = {}
    for d in docs:
        sections = [by_doc[d][s] for s in sorted(by_doc[d])]
        rng.shuffle(sections)
        for s in sections:
            rng.shuffle(s)
        queues[d] = sections
    picked: list[Chunk] = []
    while len(picked) < n and docs:
        still: list[str] = []
        for d in docs:
            if len(picked) >= n:
                break
            sections = queues[d]
            section = sections.pop(0)
            picked.append(section.pop())
            if section:
                sections.append(section)
            if sections:
                still.append(d)
        docs = still
    return picked
