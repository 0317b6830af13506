"""Pooling: each query's top-k from several retrieval modes, merged, so no one system's hits are
the only ones judged (the TREC pooling method).

Modes default to every mode the collection supports: dense, plus sparse and hybrid when it holds
BM25 vectors. The pool is ordered by the best rank a hit reached in any mode, then by chunk id, so
it does not reveal which system found it and is the same on every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from ragsonde.errors import QueryValidationError
from ragsonde.labels.cache import text_hash
from ragsonde.labels.models import BenchmarkEntry
from ragsonde.models.params import SearchParams
from ragsonde.models.unread import id_text
from ragsonde.retriever import Retriever

__all__ = ["PooledHit", "Pools", "modes_for", "pool"]

ALL_MODES = ("dense", "sparse", "hybrid")


@dataclass(frozen=True)
class PooledHit:
    chunk_id: str
    doc_id: str
    text: str
    content_hash: str
    best_rank: int


class Pools(NamedTuple):
    """Query id -> its pooled hits; query id -> why it could not run; and per mode, the search
    parameters its pool ran with (as every response says them), so a label set can say which
    configuration its pools came from."""

    hits: dict[str, list[PooledHit]]
    errors: dict[str, str]
    searches: dict[str, SearchParams]


def modes_for(retriever: Retriever, collection: str, wanted: Sequence[str] | None) -> list[str]:
    """The modes to pool: ``wanted``, or all the collection supports (raises if it is missing)."""
    supported = list(ALL_MODES) if retriever.bm25_ready(collection) else ["dense"]
    if not wanted:
        return supported
    bad = [m for m in wanted if m not in supported]
    if bad:
        raise QueryValidationError(
            f"Collection '{collection}' cannot be searched with mode {', '.join(bad)} "
            f"(it supports {', '.join(supported)}).",
            field="modes",
        )
    return list(wanted)


def pool(
    retriever: Retriever,
    collection: str,
    entries: Sequence[BenchmarkEntry],
    modes: Sequence[str],
    depth: int,
) -> Pools:
    """Each query's top ``depth`` in each of ``modes``, merged (:class:`Pools`)."""
    pools: dict[str, list[PooledHit]] = {}
    errors: dict[str, str] = {}
    searches: dict[str, SearchParams] = {}
    for e in entries:
        best: dict[str, PooledHit] = {}
        for mode in modes:
            resp = retriever.retrieve(
                {"query_text": e.query, "top_k": depth, "mode": mode}, collection=collection
            )
            if resp.error is not None:
                errors[e.query_id] = f"{resp.error.code.value}: {resp.error.message}"
                continue
            if resp.search is not None:
                searches.setdefault(mode, resp.search)
            for r in resp.results:
                # an id kept as a list or an object is none: never its Python spelling
                doc = id_text(r.metadata.get("doc_id")) or r.url or r.chunk_id
                have = best.get(r.chunk_id)
                if have is None or r.rank < have.best_rank:
                    best[r.chunk_id] = PooledHit(
                        chunk_id=r.chunk_id,
                        doc_id=str(doc),
                        text=r.text,
                        content_hash=str(r.metadata.get("content_hash") or text_hash(r.text)),
                        best_rank=r.rank,
                    )
        pools[e.query_id] = sorted(best.values(), key=lambda h: (h.best_rank, h.chunk_id))
    return Pools(pools, errors, searches)
