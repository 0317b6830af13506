"""Exporting a local model to ONNX once, and checking it against torch before it is used.

    python -m ragsonde.embedders.export [MODEL] [--quant fp32|int8|all] [--force]

(``make install`` runs it for the default model.) Needs the ``[export]`` extra: torch,
sentence-transformers and onnx. Nothing is downloaded: the weights are those of the installed model
folder. The graph is traced with ``torch.onnx.export`` from sentence-transformers' own Transformer
module (inputs ``input_ids``, ``attention_mask``, ``token_type_ids``; output the token vectors,
batch and sequence axes dynamic). int8 is ONNX Runtime's dynamic quantization of the fp32 export
(weights int8, activations quantized on the fly).

Before an export is used, :mod:`ragsonde.embedders.onnx` embeds :data:`VERIFY_TEXTS` with it (alone
and in padded batches, as queries and as documents) and compares each vector with
sentence-transformers' own: fp32 must reach a cosine of 0.9999 on every text, int8 0.95
(measured: 0.97 least, 0.99 mean; its retrieval quality is measured in bench/bench_embed.py). The
result goes into a manifest beside the file; a run-time load checks the manifest, not torch.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any, get_args

import numpy as np

from ragsonde.embedders.onnx import (
    MIN_COSINE,
    ExportManifest,
    OnnxEmbedder,
    Quant,
    cache_dirs,
    find_export,
    import_onnxruntime,
    onnx_file_name,
    pipeline_supported,
    source_fingerprint,
)
from ragsonde.errors import EmbeddingError

__all__ = ["VERIFY_TEXTS", "export_model", "main"]

#: Texts the export is checked on: short and long (past the 256-piece cut), empty, padded,
#: accented, CJK, emoji, code, numbers.
VERIFY_TEXTS: tuple[str, ...] = (
    "Lidar measures distance by timing laser pulses reflected off surfaces.",
    "how does a PID controller work?",
    "",
    "x",
    "  leading and trailing spaces  ",
    "Ünïcödé café naïve résumé: 東京 の ロボット 🤖, tabs\tand\nnewlines",
    "Never discharge a LiPo cell below 3.0 volts; it can swell or catch fire. " * 3,
    "word " * 400,
    "def f(x): return x ** 2  # squares, 0x1F, 3.14159e-10",
    "SARS-CoV-2 ACE2 receptor binding; p < 0.001 (n = 1,024).",
    "The quick brown fox jumps over the lazy dog. " * 30,
    "A",
)


def _versions() -> dict[str, str]:
    out = {}
    for dist in ("torch", "sentence-transformers", "transformers", "onnx", "onnxruntime"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "absent"
    return out


def _writable_dir(model_dir: Path) -> Path:
    """The first cache folder that can be written: beside the model, else the user cache."""
    for folder in cache_dirs(model_dir):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=folder):
                return folder
        except OSError:
            continue
    raise EmbeddingError(f"No writable folder for the ONNX export of {model_dir}.")


def _load_torch_model(model_dir: Path) -> Any:
    try:
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging
    except ImportError as e:
        raise EmbeddingError(
            "Exporting the model to ONNX needs torch and sentence-transformers: "
            "pip install 'ragsonde[export]' (and torch==2.13.0 for the CPU build)."
        ) from e
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        return SentenceTransformer(str(model_dir), device="cpu")
    except Exception as e:  # torch / transformers load errors
        raise EmbeddingError(f"Could not load {model_dir} with sentence-transformers: {e}") from e


def _trace(st: Any, target: Path) -> None:
    """torch.onnx.export of the Transformer module (TorchScript tracing: no onnxscript needed)."""
    import torch

    class TokenVectors(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    # Two rows, one padded: the trace sees a mask with zeros in it.
    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]])
    mask = (ids != 0).long()
    axes = {n: {0: "batch", 1: "sequence"} for n in [*names, "token_vectors"]}
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # tracer and deprecation chatter, not our problem
        torch.onnx.export(
            TokenVectors(st[0].auto_model.eval()),
            (ids, mask, torch.zeros_like(ids)),
            str(target),
            input_names=names,
            output_names=["token_vectors"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )


def _quantize(source: Path, target: Path) -> None:
    try:
        import_onnxruntime()  # its telemetry off, unless the user chose
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as e:
        raise EmbeddingError(
            "int8 quantization needs onnx and onnxruntime: pip install 'ragsonde[export]'."
        ) from e
    # Per-channel scales keep the least cosine to fp32 at ~0.97 (one scale per tensor: 0.87);
    # reduce_range (7-bit weights) avoids int16 saturation on CPUs without VNNI.
    quiet = logging.getLogger()  # quantize_dynamic logs advice on the root logger
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        quantize_dynamic(
            str(source),
            str(target),
            weight_type=QuantType.QInt8,
            per_channel=True,
            reduce_range=True,
        )
    finally:
        quiet.setLevel(level)


def _min_cosine(st: Any, model_dir: Path, onnx_path: Path, quant: Quant) -> float:
    """The least cosine, over :data:`VERIFY_TEXTS`, between the export's vectors and torch's."""
    texts = list(VERIFY_TEXTS)
    candidate = OnnxEmbedder("verify", model_dir, quant=quant, batch_size=5)
    candidate._open(onnx_path)
    worst = 1.0
    for prompt_name, ours in (
        ("query", candidate.embed_queries),
        ("document", candidate.embed_documents),
    ):
        kwargs = {"prompt_name": prompt_name} if prompt_name in (st.prompts or {}) else {}
        ref = np.asarray(
            st.encode(texts, normalize_embeddings=True, show_progress_bar=False, **kwargs)
        )
        together = ours(texts)
        alone = np.vstack([ours([t]) for t in texts])
        worst = min(worst, float((together * ref).sum(1).min()), float((alone * ref).sum(1).min()))
    return worst


def export_model(
    model_dir: Path, quant: Quant = "fp32", *, force: bool = False
) -> tuple[Path, ExportManifest]:
    """Export ``model_dir`` to ONNX (``quant``), verify it, cache it; the existing verified
    export when there is one and not ``force``."""
    if not force and (found := find_export(model_dir, quant)) is not None:
        return found
    if not pipeline_supported(model_dir):
        raise EmbeddingError(
            f"{model_dir} is not a Transformer → mean Pooling model with a tokenizer.json: the "
            "ONNX backend cannot reproduce it. Use ?backend=torch."
        )
    t0 = time.perf_counter()
    st = _load_torch_model(model_dir)
    folder = _writable_dir(model_dir)
    target = folder / onnx_file_name(quant)
    # two processes exporting at once (two first commands on a fresh machine) each write
    # their own file: one shared name had both write into it, and the loser's rename fail
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        if quant == "fp32":
            _trace(st, partial)
        else:
            _quantize(export_model(model_dir, "fp32")[0], partial)
        cosine = _min_cosine(st, model_dir, partial, quant)
        if cosine < MIN_COSINE[quant]:
            raise EmbeddingError(
                f"The {quant} ONNX export of {model_dir} differs from torch (least cosine "
                f"{cosine:.6f} < {MIN_COSINE[quant]}): not used. Use ?backend=torch."
            )
        os.replace(partial, target)
    except EmbeddingError:
        raise
    except Exception as e:  # torch.onnx / onnxruntime.quantization errors
        raise EmbeddingError(f"Exporting {model_dir} to ONNX ({quant}) failed: {e}") from e
    finally:
        partial.unlink(missing_ok=True)
    manifest = ExportManifest(
        model_dir=str(model_dir),
        quant=quant,
        file=target.name,
        file_size=target.stat().st_size,
        source=source_fingerprint(model_dir),
        min_cosine=cosine,
        threshold=MIN_COSINE[quant],
        texts_checked=len(VERIFY_TEXTS),
        versions=_versions(),
        exported_at=ExportManifest.now(),
        export_seconds=round(time.perf_counter() - t0, 2),
    )
    written = ExportManifest.path_for(target)
    from ragsonde.outputs import write_text

    write_text(written, manifest.model_dump_json(indent=2))
    return target, manifest


def main(argv: list[str] | None = None) -> int:
    """Command line: export (and verify) the default model, or the one named."""
    from ragsonde.config import DEFAULT_EMBEDDER
    from ragsonde.embedders.local import resolve_model_path

    parser = argparse.ArgumentParser(
        prog="python -m ragsonde.embedders.export", description=__doc__
    )
    parser.add_argument("model", nargs="?", default=DEFAULT_EMBEDDER.partition(":")[2])
    parser.add_argument("--quant", choices=[*get_args(Quant), "all"], default="all")
    parser.add_argument("--force", action="store_true", help="export again even if cached")
    args = parser.parse_args(argv)
    model_dir = Path(resolve_model_path(args.model))
    if not model_dir.is_dir():
        print(f"{args.model}: no local model folder (give a path).", file=sys.stderr)
        return 2
    quants: list[Quant] = list(get_args(Quant)) if args.quant == "all" else [args.quant]
    for quant in quants:
        try:
            path, manifest = export_model(model_dir, quant, force=args.force)
        except EmbeddingError as e:
            print(f"error: {e.message}", file=sys.stderr)
            return 1
        print(
            f"{quant}: {path} ({manifest.file_size / 1e6:.1f} MB), least cosine to torch "
            f"{manifest.min_cosine:.6f} on {manifest.texts_checked} texts"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
