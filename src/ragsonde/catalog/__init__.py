"""The collections of a store, as ``ragsonde collections`` shows them: sizes, vectors, search
modes, and which are ragsonde's derived copies (and of what). Listing, deleting and pruning go
through the store interface (:class:`~ragsonde.store.Store`), never around it."""

from __future__ import annotations

from ragsonde.catalog.listing import (
    CollectionEntry,
    delete_collections,
    derived_copies,
    describe,
    list_entries,
    stamp_of_collection,
)

__all__ = [
    "CollectionEntry",
    "delete_collections",
    "derived_copies",
    "describe",
    "list_entries",
    "stamp_of_collection",
]
