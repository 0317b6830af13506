"""Embedders, looked up by the scheme of ``RAGSONDE_EMBEDDER`` in one registry.

``local:<model>`` (sentence-transformers, default), ``cohere:<model>``, ``openai:<model>``.
Each factory imports its heavy library lazily.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ragsonde.config import Settings
from ragsonde.embedders.base import Embedder, Vectors
from ragsonde.errors import QueryValidationError

__all__ = ["EMBEDDERS", "Embedder", "Vectors", "get_embedder", "register_embedder"]

Factory = Callable[[str, Settings], Embedder]


def _local(model: str, settings: Settings) -> Embedder:
    from ragsonde.embedders.local import LocalEmbedder

    return LocalEmbedder(model, device=settings.device, batch_size=settings.embed_batch_size)


def _cohere(model: str, settings: Settings) -> Embedder:
    from ragsonde.embedders.cohere import CohereEmbedder

    return CohereEmbedder.from_settings(model, settings)


def _openai(model: str, settings: Settings) -> Embedder:
    from ragsonde.embedders.openai import OpenAIEmbedder

    return OpenAIEmbedder.from_settings(model, settings)


#: scheme -> factory(model, settings). The one place embedders are named.
EMBEDDERS: dict[str, Factory] = {"local": _local, "cohere": _cohere, "openai": _openai}

_cache: dict[tuple[str, str], Embedder] = {}
_lock = threading.Lock()


def register_embedder(scheme: str, factory: Factory) -> None:
    """Add an embedder scheme (for plug-ins and tests)."""
    EMBEDDERS[scheme] = factory


def get_embedder(settings: Settings) -> Embedder:
    """The embedder named by ``settings.embedder``; one instance per process and spec."""
    spec = settings.embedder
    scheme, _, model = spec.partition(":")
    factory = EMBEDDERS.get(scheme)
    if factory is None or not model:
        raise QueryValidationError(
            f"Unknown embedder '{spec}'. Use one of: "
            + ", ".join(f"'{s}:<model>'" for s in sorted(EMBEDDERS))
            + " (RAGSONDE_EMBEDDER).",
            field="embedder",
        )
    key = (spec, settings.model_dump_json(include={"device", "cohere_base_url", "openai_base_url"}))
    with _lock:
        if key not in _cache:
            _cache[key] = factory(model, settings)
        return _cache[key]
