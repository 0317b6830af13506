"""A model folder's settings file that is there but cannot be read is an EMBEDDING_ERROR naming
it, never taken as absent: ``sentence_bert_config.json`` holds the word-piece cut (256 for
all-MiniLM-L6-v2, 512 without it) and the lower-casing, so a damaged one read as ``{}`` gave
other vectors with no word said. A damaged export manifest is a cache: never trusted, the export
is looked for elsewhere or made again.

Oracle: the installed model's own files, linked one by one into a folder of the test's, with one
file replaced by the damaged bytes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.embedders import get_embedder
from ragsonde.embedders.local import resolve_model_path
from ragsonde.embedders.onnx import ExportManifest, OnnxEmbedder, find_export
from ragsonde.errors import EmbeddingError

MODEL = "sentence-transformers/all-MiniLM-L6-v2"

#: What a damaged file may hold: cut short, not UTF-8, another shape, nothing.
BROKEN = {
    "truncated": b'{"max_seq_length": 256, "do_lower',
    "latin1": '{"max_seq_length": 256, "note": "r\xe9sum\xe9"}'.encode("latin-1"),
    "shape": b"[256, false]",
    "empty": b"",
}


@pytest.fixture
def model_copy(tmp_path):
    """The installed model, linked file by file (its export folder too) into the test's own."""
    source = Path(resolve_model_path(MODEL))
    copy = tmp_path / "model"
    for src in source.rglob("*"):
        if src.is_file():
            dest = copy / src.relative_to(source)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.symlink_to(src)
    return copy


def test_the_sound_copy_reads_the_models_own_settings(model_copy):
    emb = get_embedder(Settings(embedder=f"local:{model_copy}?backend=onnx"))
    assert isinstance(emb, OnnxEmbedder)
    assert (
        emb.max_tokens
        == json.loads((model_copy / "sentence_bert_config.json").read_text())["max_seq_length"]
    )


@pytest.mark.parametrize("kind", sorted(BROKEN))
@pytest.mark.parametrize("backend", ["onnx", "auto"])
def test_a_damaged_settings_file_is_an_error_naming_it(model_copy, kind, backend):
    damaged = model_copy / "sentence_bert_config.json"
    damaged.unlink()
    damaged.write_bytes(BROKEN[kind])
    with pytest.raises(EmbeddingError, match=r"sentence_bert_config\.json") as caught:
        get_embedder(Settings(embedder=f"local:{model_copy}?backend={backend}"))
    assert caught.value.code == "EMBEDDING_ERROR"


def test_a_damaged_pooling_file_is_an_error_not_another_backend(model_copy):
    damaged = model_copy / "1_Pooling" / "config.json"
    damaged.unlink()
    damaged.write_bytes(b'{"word_embedding_dimension": 384, "pooling_mode_mean_tok')
    with pytest.raises(EmbeddingError, match=r"1_Pooling/config\.json"):
        get_embedder(Settings(embedder=f"local:{model_copy}"))


def test_a_damaged_export_manifest_is_never_trusted(model_copy, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(model_copy.parent / "cache"))
    manifest = ExportManifest.path_for(model_copy / "onnx" / "model.onnx")
    assert find_export(model_copy, "fp32") is not None  # the installed export, trusted
    sound = manifest.read_bytes()
    manifest.unlink()
    manifest.write_bytes(sound[:-20])
    assert find_export(model_copy, "fp32") is None  # damaged: not trusted, and no crash
