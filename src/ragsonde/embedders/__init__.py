"""Embedders, looked up by the scheme of ``RAGSONDE_EMBEDDER`` in one registry.

``local:<model>`` (default), ``cohere:<model>``, ``openai:<model>``. Each factory imports its heavy
library lazily.

The local model takes options after a ``?``, as a URL query:
``local:sentence-transformers/all-MiniLM-L6-v2?backend=onnx&quant=int8&threads=2``.

- ``backend``: ``onnx`` (ONNX Runtime, no torch: :mod:`ragsonde.embedders.onnx`), ``torch``
  (sentence-transformers: :mod:`ragsonde.embedders.local`) or ``auto`` (default): ONNX when
  onnxruntime and tokenizers are installed, the device is the CPU and the model's pipeline is one
  the ONNX backend reproduces exactly; torch otherwise. Both give the same vectors (cosine ≥
  0.9999, checked at export), so they share one embedder name and one stored collection.
- ``quant``: ``fp32`` (default) or ``int8`` (dynamically quantized ONNX: faster, but its vectors
  differ from fp32's by a cosine of about 0.98, so it has its own name and its own collection).
- ``threads``: ONNX Runtime intra-op threads (default: the usable cores, at most 4).

The options live in the spec rather than in separate settings so that two backends can be named
side by side, e.g. by ``ragsonde compare``.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragsonde.config import Settings
from ragsonde.embedders.base import Embedder, Preloadable
from ragsonde.errors import QueryValidationError

if TYPE_CHECKING:
    from ragsonde.embedders.base import Vectors

__all__ = [
    "EMBEDDERS",
    "Embedder",
    "LocalOptions",
    "Preloadable",
    "Vectors",
    "get_embedder",
    "load_time",
    "preload",
    "register_embedder",
]

Factory = Callable[[str, Settings], Embedder]


class LocalOptions(BaseModel):
    """The ``?…`` options of a ``local:`` spec."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: Literal["auto", "onnx", "torch"] = "auto"
    quant: Literal["fp32", "int8"] = "fp32"
    threads: int | None = Field(default=None, ge=1, le=256)

    @classmethod
    def parse(cls, model: str) -> tuple[str, LocalOptions]:
        """``name?key=value&…`` → the name and its options (a VALIDATION_ERROR if bad)."""
        name, _, query = model.partition("?")
        try:
            return name, cls.model_validate(dict(parse_qsl(query, strict_parsing=bool(query))))
        except (ValidationError, ValueError) as e:
            raise QueryValidationError(
                f"Bad options in local embedder '{model}': {e}. Use "
                "?backend=auto|onnx|torch&quant=fp32|int8&threads=N.",
                field="embedder",
            ) from e


def _onnx_usable(model_dir: Path, settings: Settings) -> bool:
    from ragsonde.embedders.onnx import pipeline_supported

    return (
        settings.device == "cpu"
        and model_dir.is_dir()
        and pipeline_supported(model_dir)
        and all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "tokenizers"))
    )


def _local(model: str, settings: Settings) -> Embedder:
    from ragsonde.embedders.local import LocalEmbedder, resolve_model_path

    name, options = LocalOptions.parse(model)
    model_dir = Path(resolve_model_path(name))
    backend = options.backend
    if backend == "auto":
        usable = options.quant != "fp32" or _onnx_usable(model_dir, settings)
        backend = "onnx" if usable else "torch"
    if backend == "torch":
        if options.quant != "fp32":
            raise QueryValidationError(
                f"quant={options.quant} needs the ONNX backend, not torch ('{model}').",
                field="embedder",
            )
        return LocalEmbedder(name, device=settings.device, batch_size=settings.embed_batch_size)
    from ragsonde.embedders.onnx import OnnxEmbedder, pipeline_supported

    if not pipeline_supported(model_dir):
        raise QueryValidationError(
            f"The ONNX backend needs a local sentence-transformers folder with a tokenizer.json "
            f"and mean pooling; '{name}' is not one. Use ?backend=torch.",
            field="embedder",
        )
    return OnnxEmbedder(
        name,
        model_dir,
        quant=options.quant,
        threads=options.threads,
        batch_size=settings.embed_batch_size,
        tokens_per_batch=settings.embed_tokens_per_batch,
        exporter=_export_on_first_use,
    )


def _export_on_first_use(model_dir: Path, quant: Literal["fp32", "int8"]) -> Path:
    """Export ``model_dir`` to ONNX (verified against torch) when no export exists yet."""
    from ragsonde.embedders.export import export_model

    return export_model(model_dir, quant)[0]


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
    # every setting a factory reads, so that changing one gives an embedder that honours it
    built_from = {
        "device",
        "cohere_base_url",
        "openai_base_url",
        "embed_batch_size",
        "embed_tokens_per_batch",
        "embed_timeout_s",
        "embed_max_retries",
        "embed_deadline_s",
    }
    key = (spec, settings.model_dump_json(include=built_from))
    with _lock:
        if key not in _cache:
            _cache[key] = factory(model, settings)
        return _cache[key]


def preload(embedder: object) -> float | None:
    """Load ``embedder``'s model now, if it has one to load; the milliseconds it took (0 when it
    was loaded already), ``None`` for an embedder with nothing to load (a remote API)."""
    inner = getattr(embedder, "inner", embedder)  # the server's micro-batcher wraps one
    return inner.load() if isinstance(inner, Preloadable) else None


def load_time(embedder: object) -> float | None:
    """How long ``embedder``'s model took to load, once it has; ``None`` before, or when it has
    no model to load."""
    inner = getattr(embedder, "inner", embedder)
    return inner.model_load_ms if isinstance(inner, Preloadable) else None


def __getattr__(name: str) -> Any:
    """``Vectors``, numpy's array type, loaded on first use (see :mod:`ragsonde.embedders.base`)."""
    if name != "Vectors":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from ragsonde.embedders import base

    return base.Vectors
