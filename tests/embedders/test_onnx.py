"""The ONNX Runtime backend of the local model: same vectors as torch, options, export cache."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from ragsonde.config import Settings
from ragsonde.embedders import LocalOptions, get_embedder, load_time, preload
from ragsonde.embedders.export import VERIFY_TEXTS, export_model
from ragsonde.embedders.local import LocalEmbedder
from ragsonde.embedders.onnx import (
    ExportManifest,
    OnnxEmbedder,
    find_export,
    pipeline_supported,
)
from ragsonde.embedders.provenance import check_model_files, expected_hashes
from ragsonde.errors import EmbeddingError, QueryValidationError
from tests.support import DOCS

MODEL = "sentence-transformers/all-MiniLM-L6-v2"

#: Texts the tests compare on: not the export's own check set alone.
TEXTS = [
    *VERIFY_TEXTS,
    *(text for _, _, text in DOCS),
    "what makes a robot's heading drift?",
    "Zellweger syndrome peroxisome biogenesis disorder " * 20,
]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def onnx32() -> OnnxEmbedder:
    emb = get_embedder(Settings())
    assert isinstance(emb, OnnxEmbedder)
    return emb


@pytest.fixture(scope="module")
def int8() -> OnnxEmbedder:
    emb = get_embedder(Settings(embedder=f"local:{MODEL}?quant=int8"))
    assert isinstance(emb, OnnxEmbedder)
    return emb


def test_onnx_is_the_default_and_gives_torch_s_vectors(onnx32, torch_embedder):
    assert onnx32.backend == "onnx-fp32" and onnx32.name == f"local:{MODEL}"
    for ours, theirs in (
        (onnx32.embed_documents, torch_embedder.embed_documents),
        (onnx32.embed_queries, torch_embedder.embed_queries),
    ):
        a, b = ours(TEXTS), theirs(TEXTS)
        assert a.shape == b.shape == (len(TEXTS), 384) and a.dtype == np.float32
        assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
        assert (a * b).sum(axis=1).min() >= 0.9999
    one = onnx32.embed_queries([TEXTS[0]])[0]
    assert np.allclose(one, onnx32.embed_queries(TEXTS)[0], atol=1e-5)
    assert onnx32.embed_queries([]).shape == (0, 384)


def test_passes_of_any_token_budget_give_the_same_vectors(onnx32):
    """Texts run in passes of at most ``tokens_per_batch`` padded tokens: one text per pass,
    the default budget and one pass for all must agree (padding changes nothing)."""
    model_dir = onnx32.model_dir
    vectors = []
    for budget in (1, 256, 10**6):
        emb = OnnxEmbedder(MODEL, model_dir, tokens_per_batch=budget)
        vectors.append(emb.embed_documents(TEXTS))
        assert emb.tokens_per_batch == budget
    for other in vectors[1:]:
        assert np.allclose(vectors[0], other, atol=1e-5)
    assert get_embedder(Settings(embed_tokens_per_batch=32)).tokens_per_batch == 32


def test_cut_at_256_word_pieces_as_sentence_transformers_does(onnx32):
    assert onnx32.max_tokens == 256
    long = "lidar " * 300
    longer = long + "cake recipe lemon sugar " * 50  # all past the cut
    a, b = onnx32.embed_documents([long, longer])
    assert float(a @ b) > 0.9999


def test_torch_stays_available_by_option_under_the_same_name():
    emb = get_embedder(Settings(embedder=f"local:{MODEL}?backend=torch"))
    assert isinstance(emb, LocalEmbedder) and emb.backend == "torch"
    assert emb.name == f"local:{MODEL}"  # same vectors, so one name and one collection


def test_int8_is_close_to_fp32_but_has_its_own_name(int8, onnx32):
    assert int8.name == f"local:{MODEL}?quant=int8" and int8.backend == "onnx-int8"
    a, b = int8.embed_documents(TEXTS), onnx32.embed_documents(TEXTS)
    cos = (a * b).sum(axis=1)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert cos.min() >= 0.95 and cos.mean() >= 0.98
    assert cos.min() < 0.9999  # it is a different model: measured, not assumed equal
    q = int8.embed_queries(["laser rangefinder distance"])[0]
    docs = a[len(VERIFY_TEXTS) : len(VERIFY_TEXTS) + len(DOCS)]
    assert DOCS[int(np.argmax(docs @ q))][0] == "lidar"


@pytest.mark.parametrize(
    "spec",
    [
        f"local:{MODEL}?backend=tpu",
        f"local:{MODEL}?colour=red",
        f"local:{MODEL}?threads=0",
        f"local:{MODEL}?backend=torch&quant=int8",
        f"local:{MODEL}?backend",
    ],
)
def test_bad_options_are_validation_errors(spec):
    with pytest.raises(QueryValidationError, match=r"embedder|quant|backend") as info:
        get_embedder(Settings(embedder=spec))
    assert info.value.field == "embedder"


def test_options_parse():
    name, opts = LocalOptions.parse(f"{MODEL}?backend=onnx&quant=int8&threads=3")
    assert name == MODEL and (opts.backend, opts.quant, opts.threads) == ("onnx", "int8", 3)
    assert LocalOptions.parse(MODEL) == (MODEL, LocalOptions())


def test_load_is_timed_once_and_threads_do_not_spin(onnx32):
    fresh = OnnxEmbedder(MODEL, onnx32.model_dir, threads=1)
    assert load_time(fresh) is None and fresh._session is None
    assert fresh.dimension == 384  # from the model's files, nothing loaded
    first = preload(fresh)
    assert first is not None and first > 0 and load_time(fresh) == pytest.approx(first)
    assert preload(fresh) == 0.0  # loaded once
    options = fresh._session.get_session_options()
    assert options.intra_op_num_threads == 1 and options.inter_op_num_threads == 1
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_a_model_the_backend_cannot_reproduce_is_refused(tmp_path):
    (tmp_path / "modules.json").write_text(
        json.dumps([{"path": "", "type": "sentence_transformers.models.Transformer"}])
    )
    assert not pipeline_supported(tmp_path)
    with pytest.raises(QueryValidationError, match="backend=torch"):
        get_embedder(Settings(embedder=f"local:{tmp_path}?backend=onnx"))
    # auto falls back to torch for it
    assert isinstance(get_embedder(Settings(embedder=f"local:{tmp_path}")), LocalEmbedder)


@pytest.fixture
def model_copy(tmp_path, onnx32):
    """The installed model, linked file by file into a folder of the test's own."""
    copy = tmp_path / "model"
    for src in onnx32.model_dir.rglob("*"):
        if src.is_file() and "onnx" not in src.relative_to(onnx32.model_dir).parts:
            dest = copy / src.relative_to(onnx32.model_dir)
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.symlink_to(src)
    return copy


def test_an_export_is_used_only_while_it_matches_its_weights(model_copy, onnx32, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(model_copy.parent / "cache"))
    original = find_export(onnx32.model_dir, "fp32")
    assert original is not None
    shutil.copytree(original[0].parent, model_copy / "onnx")
    found = find_export(model_copy, "fp32")
    assert found is not None and found[1].min_cosine >= 0.9999
    # New weights (a different file): the export no longer counts, and without export it says how
    weights = model_copy / "model.safetensors"
    weights.unlink()
    shutil.copyfile(onnx32.model_dir / "model.safetensors", weights)
    assert find_export(model_copy, "fp32") is None
    with pytest.raises(EmbeddingError, match=r"ragsonde\.embedders\.export"):
        OnnxEmbedder(MODEL, model_copy).embed_queries(["x"])
    # A truncated file is not used either
    shutil.copytree(original[0].parent, model_copy / "onnx2")
    manifest = ExportManifest.model_validate_json(original[1].model_dump_json())
    assert not manifest.valid_for(model_copy, model_copy / "onnx2" / "missing.onnx")


def test_export_writes_a_verified_file_beside_the_model(model_copy, torch_embedder, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(model_copy.parent / "cache"))
    path, manifest = export_model(model_copy, "fp32")
    assert path == model_copy / "onnx" / "model.onnx" and path.is_file()
    assert manifest.min_cosine >= 0.9999 and manifest.texts_checked == len(VERIFY_TEXTS)
    assert find_export(model_copy, "fp32") == (path, manifest)
    emb = OnnxEmbedder(MODEL, model_copy)
    assert (emb.embed_queries(TEXTS) * torch_embedder.embed_queries(TEXTS)).sum(1).min() >= 0.9999


def test_provenance_hashes_the_installed_files(onnx32):
    checks = {c.file: c for c in check_model_files(onnx32.model_dir, MODEL)}
    assert set(checks) == set(expected_hashes(MODEL)) and "model.safetensors" in checks
    for c in checks.values():
        assert c.actual is not None and len(c.actual) == 64
        assert c.status == ("unknown" if c.expected is None else "match")
    # The files that decide the vectors carry the upstream hashes, and the installed ones match.
    for name in ("model.safetensors", "config.json", "tokenizer.json", "vocab.txt"):
        assert checks[name].status == "match", name
    wrong = check_model_files(onnx32.model_dir.parent, MODEL)  # not the model folder
    assert {c.status for c in wrong} == {"missing"}
