"""The store interface: what the rooms above ask of a store, whichever backend it is.

Two protocols: :class:`SearchStore` is what the retriever needs; :class:`Store` adds what
ingestion, ``inspect`` and evaluation need. :mod:`ragsonde.store` implements them (``edge.py``,
``client.py``) and opens one (``open_store``); each implementation translates its library's
exceptions into :mod:`ragsonde.errors` inside every method: nothing else escapes. The data that
crosses it is :mod:`ragsonde.models.points`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ragsonde.models.index import IndexConfig
from ragsonde.models.params import SearchParams
from ragsonde.models.points import (
    CollectionInfo,
    FilterSpec,
    Hit,
    PointRecord,
    Ranked,
    SearchSpec,
)
from ragsonde.models.scores import Distance

if TYPE_CHECKING:
    from pydantic import SecretStr

__all__ = [
    "COLLECTION_NAME_PATTERN",
    "SearchStore",
    "Store",
    "StoreSettings",
    "WaitsForHolders",
]

#: A collection's name (the embedded store's folder; ``..`` anywhere is refused besides): the
#: store enforces it, the HTTP API publishes it.
COLLECTION_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,254}$"


@runtime_checkable
class StoreSettings(Protocol):
    """What opening a store reads from the settings. :class:`ragsonde.config.Settings` has every
    field (the store names them here instead of importing the settings, which sit above it)."""

    @property
    def home(self) -> Path: ...
    @property
    def qdrant_url(self) -> str | None: ...
    @property
    def qdrant_api_key(self) -> SecretStr | None: ...
    @property
    def qdrant_timeout_s(self) -> float: ...
    @property
    def vector(self) -> str | None: ...
    @property
    def search(self) -> SearchParams:
        """The search parameters: the store applies ``hnsw_ef`` where a search sets none."""
        ...

    @property
    def lock_wait_s(self) -> float: ...
    @property
    def server_idle_release_s(self) -> float: ...


class SearchStore(Protocol):
    """What the retriever needs."""

    @property
    def backend(self) -> str:
        """``edge`` or ``qdrant`` (server) or ``qdrant-local``."""
        ...

    def collection_info(self, name: str) -> CollectionInfo:
        """Describe ``name``; raise CollectionNotFoundError if it does not exist."""
        ...

    def search(self, collection: str, specs: Sequence[SearchSpec]) -> list[list[Hit]]:
        """Run all ``specs`` in one request; one hit list per spec, best first."""
        ...


@runtime_checkable
class Store(SearchStore, Protocol):
    """A whole store: collections, writes, reads."""

    def list_collections(self) -> list[str]: ...

    def ranked(self, collection: str, specs: Sequence[SearchSpec]) -> list[Ranked]:
        """:meth:`search`'s rankings as ids and raw scores only (no payload, no :class:`Hit`):
        what replaying many queries reads, at a fraction of the cost per hit."""
        ...

    def create_collection(
        self,
        name: str,
        dimension: int,
        *,
        vector_name: str | None = None,
        sparse_vector_name: str | None = None,
        indexed_fields: Mapping[str, str] | None = None,
        distance: Distance = Distance.COSINE,
        index: IndexConfig | None = None,
    ) -> CollectionInfo:
        """Create a collection (cosine unless told) with indexes on ``indexed_fields``.

        ``index``: the dense vector's quantization and HNSW graph (``None``: the backend's
        defaults). A backend that keeps neither (qdrant-client's local mode) creates the
        collection all the same; its ``collection_info().index`` is then ``None``.
        """
        ...

    def delete_collection(self, name: str) -> None: ...

    def upsert(self, collection: str, points: Sequence[PointRecord]) -> None:
        """Insert or replace ``points`` (durable when this returns)."""
        ...

    def delete_points(self, collection: str, ids: Sequence[str]) -> None: ...

    def retrieve(
        self, collection: str, ids: Sequence[str], *, with_vectors: bool = False
    ) -> list[PointRecord]:
        """The points among ``ids`` that exist, in no particular order."""
        ...

    def scroll(
        self,
        collection: str,
        *,
        batch_size: int = 256,
        with_vectors: bool = False,
        filter: FilterSpec | None = None,
    ) -> Iterator[list[PointRecord]]:
        """Every point, in batches."""
        ...

    def count(self, collection: str, filter: FilterSpec | None = None) -> int: ...

    def build_index(self, collection: str) -> None:
        """Build the ANN index after bulk writes (a no-op where the backend does it itself)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class WaitsForHolders(Protocol):
    """A store whose collections another process may hold (the embedded one): how long opening
    one on this thread waits for its holder can be cut short, for a listing that must answer
    (``GET /v1/collections``) rather than wait ``lock_wait_s`` for each held collection."""

    def waiting_at_most(self, seconds: float) -> AbstractContextManager[None]: ...
