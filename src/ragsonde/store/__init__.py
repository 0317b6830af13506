"""Stores: where the vectors live. Embedded Qdrant Edge by default; qdrant-client when
``QDRANT_URL`` is set (``:memory:`` for its local mode).

The backend is chosen in one registry, :data:`BACKENDS`, keyed by what ``QDRANT_URL`` says.
"""

from __future__ import annotations

from collections.abc import Callable

from ragsonde.config import Settings
from ragsonde.store.base import (
    CollectionInfo,
    FilterSpec,
    Hit,
    PointRecord,
    SearchSpec,
    SearchStore,
    SparseVector,
    Store,
)
from ragsonde.store.scores import SIMILARITY, Distance, similarity_of

__all__ = [
    "BACKENDS",
    "SIMILARITY",
    "CollectionInfo",
    "Distance",
    "FilterSpec",
    "Hit",
    "PointRecord",
    "SearchSpec",
    "SearchStore",
    "SparseVector",
    "Store",
    "backend_for",
    "open_store",
    "similarity_of",
]


def _edge(settings: Settings) -> Store:
    from ragsonde.store.edge import EdgeStore

    return EdgeStore(settings.home, hnsw_ef=settings.hnsw_ef, vector=settings.vector)


def _client(settings: Settings) -> Store:
    from ragsonde.store.client import QdrantClientStore

    store: Store = QdrantClientStore.from_settings(settings)
    return store


#: backend name -> factory. ``backend_for`` picks the name from the settings.
BACKENDS: dict[str, Callable[[Settings], Store]] = {"edge": _edge, "qdrant": _client}


def backend_for(settings: Settings) -> str:
    """``qdrant`` when QDRANT_URL is set (a server, or ``:memory:``), else ``edge``."""
    return "qdrant" if settings.qdrant_url else "edge"


def open_store(settings: Settings) -> Store:
    """The store the settings name. Close it (``store.close()``) when done."""
    return BACKENDS[backend_for(settings)](settings)
