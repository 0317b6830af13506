"""The embedder interface: four members, nothing more."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    #: A 2-D float32 array, one row per input text.
    Vectors = npt.NDArray[np.float32]

__all__ = ["Embedder", "Preloadable", "Vectors", "microbatched_by_default"]


def __getattr__(name: str) -> Any:
    """``Vectors`` at run time, made on first use: numpy is not imported with the interface
    (``ragsonde --help`` and the CLI's start-up never load it)."""
    if name != "Vectors":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import numpy as np
    import numpy.typing as npt

    vectors = npt.NDArray[np.float32]
    globals()["Vectors"] = vectors
    return vectors


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors. Implementations translate their backend's errors into
    :class:`ragsonde.errors.EmbeddingError` / :class:`ragsonde.errors.AuthError` and nothing else
    escapes them."""

    @property
    def name(self) -> str:
        """The spec this embedder was built from, e.g. ``local:sentence-transformers/…``."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector this embedder returns."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Embed search queries (asymmetric models get their query prompt/input type)."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        """Embed documents/chunks for storage."""
        ...


@runtime_checkable
class Preloadable(Protocol):
    """An embedder with a model to load (the local ones). Loading it before the first query keeps
    the load out of that query's ``embedding_ms``; the load is reported once, on its own."""

    model_load_ms: float | None

    def load(self) -> float:
        """Load now; the milliseconds it took (0 when already loaded)."""
        ...


def microbatched_by_default(embedder: object) -> bool:
    """Whether ``ragsonde serve`` micro-batches this embedder when ``RAGSONDE_MICROBATCH`` is
    unset: its class says so with ``microbatch_by_default = True`` (only where a bench run
    showed it pays; see :mod:`ragsonde.server.batcher`). Others, remote APIs included: no."""
    return getattr(embedder, "microbatch_by_default", False) is True
