"""Stores: where the vectors live. Embedded Qdrant Edge by default; qdrant-client when
``QDRANT_URL`` is set (``:memory:`` for its local mode).

This room is the backend only: the interface it implements (:mod:`ragsonde.models.store`) and
the data that crosses it (:mod:`ragsonde.models.points`, ``payload``, ``index``, ``scores``) are
vocabulary in :mod:`ragsonde.models`.

The backend is chosen in one registry, :data:`BACKENDS`, keyed by what ``QDRANT_URL`` says.
"""

from __future__ import annotations

from collections.abc import Callable

from ragsonde.models.store import Store, StoreSettings

__all__ = ["BACKENDS", "backend_for", "open_store"]


def _edge(settings: StoreSettings, idle_release_s: float | None) -> Store:
    from ragsonde.store.edge import EdgeStore

    return EdgeStore(
        settings.home,
        hnsw_ef=settings.search.hnsw_ef,
        vector=settings.vector,
        idle_release_s=idle_release_s,
        lock_wait_s=settings.lock_wait_s,
    )


def _client(settings: StoreSettings, idle_release_s: float | None) -> Store:
    from ragsonde.store.client import QdrantClientStore

    store: Store = QdrantClientStore.from_settings(settings)
    return store


#: backend name -> factory. ``backend_for`` picks the name from the settings.
BACKENDS: dict[str, Callable[[StoreSettings, float | None], Store]] = {
    "edge": _edge,
    "qdrant": _client,
}


def backend_for(settings: StoreSettings) -> str:
    """``qdrant`` when QDRANT_URL is set (a server, or ``:memory:``), else ``edge``."""
    return "qdrant" if settings.qdrant_url else "edge"


def open_store(settings: StoreSettings, *, long_lived: bool = False) -> Store:
    """The store the settings name. Close it (``store.close()``) when done.

    Sharing the embedded store's home (see :mod:`ragsonde.store.edge`): a command waits up to
    ``settings.lock_wait_s`` for a collection another process holds; a ``long_lived`` store (the
    server's) lets go of one it has not used for ``settings.server_idle_release_s``, or at once
    when another process waits for it. A Qdrant server needs none of this.
    """
    idle = settings.server_idle_release_s if long_lived else None
    return BACKENDS[backend_for(settings)](settings, idle)
