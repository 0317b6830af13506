"""One collection described, every collection listed, derived copies found and deleted."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext

from pydantic import BaseModel, ConfigDict

from ragsonde.errors import (
    CollectionInUseError,
    CollectionNotFoundError,
    CollectionUnreadableError,
    QueryValidationError,
)
from ragsonde.models.derived import DerivedCopy, stamp_of
from ragsonde.models.query import SearchMode
from ragsonde.models.store import Store, WaitsForHolders

__all__ = [
    "CollectionEntry",
    "delete_collections",
    "derived_copies",
    "describe",
    "list_entries",
    "stamp_of_collection",
]


class CollectionEntry(BaseModel):
    """One collection as ``ragsonde collections`` lists it."""

    model_config = ConfigDict(frozen=True)

    name: str
    points: int | None
    """None only for a collection ``in_use`` (nor ``dimension``, ``distance``: unread)."""
    dimension: int | None
    distance: str | None
    dense_vector: str | None
    """The dense vector searched (None: the unnamed default vector)."""
    sparse_vector: str | None
    """The sparse vector, when the collection has one."""
    modes: list[SearchMode]
    """The search modes it answers: dense, and sparse and hybrid with a sparse vector ragsonde's
    BM25 can query (not one SPLADE, BM42 or a hashing vectorizer made)."""
    backend: str
    derived: DerivedCopy | None = None
    """Set when ragsonde derived it from another collection (e.g. the ICT copy)."""
    in_use: str | None = None
    """Set when another process holds this embedded collection: who, as its lock file says
    (``pid N on host H``); nothing else of it could be read."""
    unreadable: str | None = None
    """Set when the collection's files could not be read (a damaged ``edge_config.json``), or
    it has no dense vector ragsonde can search (a multivector, several and no ``--vector``): why.
    Nothing else of it was read; the others are listed."""


def stamp_of_collection(store: Store, name: str) -> DerivedCopy | None:
    """The derived-copy stamp of ``name`` (read from one point: every point of a copy carries
    it); None for a collection ragsonde did not derive, or an empty one."""
    batches = store.scroll(name, batch_size=1)
    try:
        first = next(iter(batches), [])
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()
    return stamp_of(first[0].payload) if first else None


def describe(store: Store, name: str) -> CollectionEntry:
    """``name``'s entry (raises CollectionNotFoundError)."""
    info = store.collection_info(name)
    modes: list[SearchMode] = (
        ["dense", "sparse", "hybrid"] if _bm25_ready(store, name) else ["dense"]
    )
    return CollectionEntry(
        name=name,
        points=info.points_count,
        dimension=info.dimension,
        distance=str(info.distance),
        dense_vector=info.vector_name,
        sparse_vector=info.sparse_vector_name,
        modes=modes,
        backend=info.backend or store.backend,
        derived=stamp_of_collection(store, name),
    )


def _bm25_ready(store: Store, name: str) -> bool:
    """Whether ragsonde's BM25 queries can search ``name``'s sparse vector (one another encoder
    made answers no BM25 mode: :meth:`~ragsonde.retriever.facts.CollectionFacts.bm25_problem`,
    text read through every known layout)."""
    from ragsonde.embedders.sparse import query_language
    from ragsonde.models.payload import DEFAULT_MAPPING
    from ragsonde.retriever.facts import CollectionFacts

    facts = CollectionFacts(lambda: store)
    if facts.info(name).sparse_vector_name is None:
        return False
    language = query_language(name, facts.recorded_language(name), None)
    return facts.bm25_problem(name, DEFAULT_MAPPING, language) is None


def list_entries(store: Store, *, wait_s: float | None = None) -> list[CollectionEntry]:
    """Every collection of the store, by name; one another process holds (after the store's
    lock wait, or ``wait_s`` when shorter) is listed as ``in_use`` by it, not a failure of the
    whole listing."""
    patience = (
        store.waiting_at_most(wait_s)
        if wait_s is not None and isinstance(store, WaitsForHolders)
        else nullcontext()
    )
    entries = []
    with patience:
        for name in store.list_collections():
            try:
                entries.append(describe(store, name))
            except CollectionInUseError as e:
                entries.append(_unopened(store, name, in_use=e.holder))
            except CollectionUnreadableError as e:  # the others still list
                entries.append(_unopened(store, name, unreadable=e.message))
            except QueryValidationError as e:
                if e.field != "vector":
                    raise
                # no dense vector to search (multivector, sparse only, several and none
                # chosen, or RAGSONDE_VECTOR naming one it lacks): says why; the others list
                entries.append(_unopened(store, name, unreadable=e.message))
    return entries


def _unopened(
    store: Store, name: str, *, in_use: str | None = None, unreadable: str | None = None
) -> CollectionEntry:
    """A collection listed by name only: held by ``in_use``, or ``unreadable`` for that reason."""
    return CollectionEntry(
        name=name,
        points=None,
        dimension=None,
        distance=None,
        dense_vector=None,
        sparse_vector=None,
        modes=[],
        backend=store.backend,
        in_use=in_use,
        unreadable=unreadable,
    )


def derived_copies(
    store: Store, of: str | None = None, entries: Sequence[CollectionEntry] | None = None
) -> list[CollectionEntry]:
    """The collections ragsonde derived (of ``of`` only, when given), among ``entries`` (else
    the store's listing). One ``in_use`` is not among them: nobody could read whether it is."""
    return [
        e
        for e in (list_entries(store) if entries is None else entries)
        if e.derived is not None and (of is None or e.derived.of == of)
    ]


def delete_collections(store: Store, names: Sequence[str]) -> list[str]:
    """Delete each of ``names`` through the store; all must exist (CollectionNotFoundError names
    the first that does not, before anything is deleted). Returns the names deleted."""
    have = set(store.list_collections())
    for name in names:
        if name not in have:
            raise CollectionNotFoundError(name, available=sorted(have))
    for name in names:
        store.delete_collection(name)
    return list(names)
