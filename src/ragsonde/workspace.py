"""The one place that assembles the parts: settings → store and embedder → close.

A :class:`Workspace` holds the :class:`~ragsonde.config.Settings`, and opens the store
(:func:`ragsonde.store.open_store`) and the embedder (the :data:`ragsonde.embedders.EMBEDDERS`
registry) the first time each is asked for. Closing it closes what it opened, never what it was
given: a caller that hands in its own store keeps it open and closes it itself.

>>> with Workspace(collection="docs") as ws:                   # doctest: +SKIP
...     ws.store.collection_info(ws.settings.collection)
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from types import TracebackType
from typing import TYPE_CHECKING, Any

from ragsonde.config import Settings, load_settings
from ragsonde.embedders import Embedder, get_embedder
from ragsonde.errors import QueryValidationError, StoreConnectionError
from ragsonde.models.store import Store
from ragsonde.store import open_store

if TYPE_CHECKING:
    from ragsonde.models.payload import PayloadMapping
    from ragsonde.store.inspect import CollectionReport

__all__ = ["Workspace", "require", "using"]


class Workspace:
    """Settings plus a lazily opened store and embedder, and their closing.

    ``settings``: use these; by default they are loaded (init overrides, environment,
    ``ragsonde.toml``) with ``overrides`` (``None`` values are dropped) on top.
    ``store`` / ``embedder``: use these objects instead of opening them; the workspace will not
    close them. (To name another embedder, set ``embedder`` in the settings.)
    ``long_lived``: the store is held by a long-running process (the server), which lets go of
    embedded collections it is not using (:func:`ragsonde.store.open_store`).
    ``wrap_embedder``: what the embedder the settings name is used through (the server's
    micro-batching, :func:`ragsonde.server.batcher.batching`); a wrapper it returns is the
    workspace's, closed by :meth:`close` when it has a ``close()``.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        store: Store | None = None,
        embedder: Embedder | None = None,
        long_lived: bool = False,
        wrap_embedder: Callable[[Embedder], Embedder] | None = None,
        **overrides: Any,
    ) -> None:
        if settings is not None and any(v is not None for v in overrides.values()):
            raise TypeError("Workspace: pass either settings or setting overrides, not both")
        require(settings, Settings, "settings")
        for name, part, setting in (
            ("store", store, "qdrant_url"),
            ("embedder", embedder, "embedder"),
        ):
            if isinstance(part, str | bytes | Mapping):  # any object that acts as one will do
                raise QueryValidationError(
                    f"{name} must be a {name} object, not {type(part).__name__}; to name one, "
                    f"set {setting} in the settings.",
                    field=name,
                )
        self.settings: Settings = settings if settings is not None else load_settings(**overrides)
        self._store = store
        self._embedder = embedder
        self._opened_store: Store | None = None
        self._long_lived = long_lived
        self._wrap = wrap_embedder
        self._made_embedder: Embedder | None = None
        # Two server threads may ask for the store first at once; only one may open it, or the
        # other's store would be left open with nobody to close it.
        self._lock = threading.Lock()
        self._closed = False

    @property
    def store(self) -> Store:
        """The store the settings name, opened on first use. A closed workspace opens none: it
        did, quietly, and held the embedded collection after its owner let it go."""
        store = self._store
        if store is None:
            with self._lock:
                if self._closed:
                    raise StoreConnectionError(
                        "This workspace is closed: use it inside its `with` block, or open "
                        "a new Workspace."
                    )
                if self._store is None:
                    self._store = self._opened_store = open_store(
                        self.settings, long_lived=self._long_lived
                    )
                store = self._store
        return store

    @property
    def embedder(self) -> Embedder:
        """The embedder the settings name (``settings.embedder``), loaded on first use."""
        embedder = self._embedder
        if embedder is None:
            with self._lock:
                if self._embedder is None:
                    built = get_embedder(self.settings)
                    if self._wrap is not None:
                        wrapped = self._wrap(built)
                        self._made_embedder = wrapped if wrapped is not built else None
                        built = wrapped
                    self._embedder = built
                embedder = self._embedder
        return embedder

    @staticmethod
    def embedder_for(settings: Settings) -> Embedder:
        """The embedder ``settings`` name (the :data:`ragsonde.embedders.EMBEDDERS` registry;
        shared per process), for a caller that wraps it before a workspace holds it."""
        return get_embedder(settings)

    @property
    def embedder_name(self) -> str:
        """The embedder's name, without loading it when it is not loaded yet."""
        return self._embedder.name if self._embedder is not None else self.settings.embedder

    def inspect(
        self,
        collection: str | None = None,
        *,
        sample: int = 1000,
        mapping: PayloadMapping | None = None,
    ) -> CollectionReport:
        """``collection`` (default: the settings') described against this workspace's embedder
        (:func:`~ragsonde.store.inspect.inspect_collection`): its name, and its dimension when
        the model can give it (a model that cannot load still leaves the collection described).
        ``mapping``: the payload mapping to check, default the settings'."""
        from ragsonde.errors import RagsondeError
        from ragsonde.models.query import resolve_collection
        from ragsonde.store.inspect import inspect_collection

        if isinstance(sample, bool) or not isinstance(sample, int) or sample < 1:
            # -1 was an OverflowError from the engine, NaN a TypeError from a slice
            raise QueryValidationError(
                f"sample: the payloads to read must be a whole number >= 1, not {sample!r}.",
                field="sample",
            )
        try:
            dim: int | None = self.embedder.dimension
        except RagsondeError:
            dim = None
        return inspect_collection(
            self.store,
            resolve_collection(collection, self.settings.collection),
            embedder=self.embedder_name,
            embedder_dimension=dim,
            sample=sample,
            mapping=self.settings.payload_mapping if mapping is None else mapping,
        )

    def sharing(
        self, *, settings: Settings | None = None, embedder: Embedder | None = None
    ) -> Workspace:
        """A second workspace beside this one, for the other side of a comparison.

        It uses this workspace's embedder unless ``embedder`` is given, and this workspace's
        store unless ``settings`` are given (another store: opened by the new workspace, and
        closed by its :meth:`close`). Close it before this one; it never closes what it shares.
        """
        emb = self.embedder if embedder is None else embedder
        if settings is None:
            return Workspace(self.settings, store=self.store, embedder=emb)
        return Workspace(settings, embedder=emb)

    def close(self) -> None:
        """Close the store if this workspace opened it, and the embedder's wrapper if it made
        one. Safe to call twice.

        Embedders are shared per process by :func:`ragsonde.embedders.get_embedder` and hold
        nothing to release, so there is nothing else to close for them.
        """
        with self._lock:
            self._closed = True
            opened, self._opened_store = self._opened_store, None
            if opened is not None and self._store is opened:
                self._store = None
            made, self._made_embedder = self._made_embedder, None
        close_embedder = getattr(made, "close", None)
        if callable(close_embedder):  # a wrapper made here (the batcher's thread)
            close_embedder()
        if opened is not None:
            opened.close()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def using(
    workspace: Workspace | None = None,
    settings: Settings | None = None,
    *,
    store: Store | None = None,
    embedder: Embedder | None = None,
) -> AbstractContextManager[Workspace]:
    """The one way a library entry point gets its workspace: ``workspace`` as it is (its owner
    closes it), or a new one from ``settings`` (default: loaded; ``store`` and ``embedder``:
    objects to use, which it does not close), closed on exit.

    >>> with using(workspace) as ws:                              # doctest: +SKIP
    ...     ws.store.collection_info(ws.settings.collection)
    """
    require(workspace, Workspace, "workspace")
    if workspace is None:
        return Workspace(settings, store=store, embedder=embedder)
    if settings is not None or store is not None or embedder is not None:
        raise TypeError("pass a workspace or settings/store/embedder, not both")
    return nullcontext(workspace)


def require(value: object, kind: type, name: str) -> None:
    """``value`` is None or a ``kind``: a dict or a Settings where a Workspace belongs failed
    later with an AttributeError, or (a dict for the settings) not at all until used."""
    if value is not None and not isinstance(value, kind):
        raise QueryValidationError(
            f"{name} must be a ragsonde {kind.__name__} (or None), not {type(value).__name__}.",
            field=name,
        )
