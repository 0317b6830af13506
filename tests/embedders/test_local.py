"""The torch backend (sentence-transformers) with the real all-MiniLM-L6-v2 model."""

from __future__ import annotations

import numpy as np
import pytest

from ragsonde.config import Settings
from ragsonde.embedders import get_embedder
from ragsonde.embedders.local import LocalEmbedder
from ragsonde.errors import EmbeddingError

pytestmark = pytest.mark.slow  # every test here loads (or tries to load) the model


def test_vectors_are_384_dim_normalised_and_meaningful(torch_embedder):
    embedder = torch_embedder
    vecs = embedder.embed_documents(
        ["Lidar measures distance with laser pulses.", "A recipe for lemon cake."]
    )
    q = embedder.embed_queries(["laser rangefinder distance"])
    assert vecs.shape == (2, 384) and q.shape == (1, 384) and vecs.dtype == np.float32
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    sims = vecs @ q[0]
    assert sims[0] > sims[1] + 0.2
    assert embedder.embed_queries([]).shape == (0, 384)


def test_static_metadata_agrees_with_the_loaded_model():
    fresh = LocalEmbedder("sentence-transformers/all-MiniLM-L6-v2")
    assert fresh.dimension == 384 and fresh.max_tokens == 256
    assert fresh._model is None  # read from the model's files, torch not needed
    path = fresh.tokenizer_path
    assert path is not None and path.name == "tokenizer.json"
    fresh.embed_queries(["load it"])
    assert fresh._model is not None
    assert fresh.dimension == 384 and fresh.max_tokens == 256


def test_same_text_same_vector_across_batches(torch_embedder):
    embedder = torch_embedder
    one = embedder.embed_documents(["IMU gyroscope bias"])[0]
    many = embedder.embed_documents(["something else entirely", "IMU gyroscope bias"])[1]
    assert np.allclose(one, many, atol=1e-5)


def test_an_unloadable_model_is_an_embedding_error_that_says_what_to_do(tmp_path):
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    with pytest.raises(EmbeddingError, match="RAGSONDE_EMBEDDER"):
        LocalEmbedder(str(broken)).embed_queries(["x"])


def test_the_default_setting_picks_the_local_model():
    emb = get_embedder(Settings())
    assert emb.name == "local:sentence-transformers/all-MiniLM-L6-v2"
    assert emb.dimension == 384
