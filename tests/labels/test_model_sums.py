"""A ``SHA256SUMS`` beside a local model is read as ``sha256sum`` writes it, as bytes (issue 33:
one that was not UTF-8 was a traceback): other lines may name files in any encoding."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ragsonde.errors import LlmError, QueryValidationError
from ragsonde.labels.local import resolve_model


def _model(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + bytes(range(256)) * 8)
    return path, hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_sums_file_that_is_not_utf8_still_verifies_the_model(tmp_path: Path):
    path, digest = _model(tmp_path)
    other = hashlib.sha256(b"x").hexdigest()
    (tmp_path / "SHA256SUMS").write_bytes(
        f"{other}  caf".encode()
        + b"\xe9.gguf\n\xff\xfe binary junk\n"
        + f"{digest} *tiny.gguf\n".encode()
    )
    found = resolve_model(str(path), tmp_path)
    assert found.verified and found.sha256 == digest
    (tmp_path / "SHA256SUMS").write_bytes(f"{other}  tiny.gguf\n".encode())
    with pytest.raises(LlmError, match="sha256"):
        resolve_model(str(path), tmp_path)


def test_a_sums_file_without_a_digest_for_the_model_is_one_clear_error(tmp_path: Path):
    path, _ = _model(tmp_path)
    (tmp_path / "SHA256SUMS").write_bytes(b"\xe9\xe9\xe9  tiny.gguf\n")
    with pytest.raises(QueryValidationError, match="not a sha256"):
        resolve_model(str(path), tmp_path)
    (tmp_path / "SHA256SUMS").write_bytes(b"\x00\xff binary only \x80\n")
    assert not resolve_model(str(path), tmp_path).verified  # it declares nothing for it
