"""``embed_groups``: groups embedded together, and apart when the combined call fails.

Against the fake OpenAI-compatible API on loopback (real HTTP, real wire format), so the calls
it receives can be counted.
"""

from __future__ import annotations

import numpy as np
import pytest

from ragsonde.config import Settings
from ragsonde.embedders.isolate import embed_groups
from ragsonde.embedders.openai import OpenAIEmbedder
from ragsonde.errors import AuthError, EmbeddingError
from ragsonde.testing import FakeEmbeddingAPI, fake_vector

KEY = "sk-isolate-test-key"


@pytest.fixture
def api():
    with FakeEmbeddingAPI(api_key=KEY) as server:
        yield server


def embedder(api, key: str = KEY) -> OpenAIEmbedder:
    s = Settings(openai_base_url=f"{api.url}/v1", openai_api_key=key, embed_max_retries=0)
    return OpenAIEmbedder.from_settings("m", s)


def test_one_call_when_all_is_well(api):
    out = embed_groups(embedder(api).embed_queries, [["a"], ["b", "c"], []])
    assert [len(v) for v in out] == [1, 2, 0]
    np.testing.assert_allclose(out[1][1], fake_vector("c", 64), atol=1e-6)
    assert len(api.requests) == 1


def test_a_group_that_breaks_the_call_fails_alone(api):
    emb = embedder(api)

    def embed(texts):
        if any("poison" in t for t in texts):
            raise EmbeddingError("the API refused one input")
        return emb.embed_queries(texts)

    out = embed_groups(embed, [["a"], ["poison", "b"], ["c"]])
    assert isinstance(out[1], EmbeddingError)
    np.testing.assert_allclose(out[0][0], fake_vector("a", 64), atol=1e-6)
    np.testing.assert_allclose(out[2][0], fake_vector("c", 64), atol=1e-6)


def test_a_refused_key_is_everyones_error_without_retrying_each(api):
    out = embed_groups(embedder(api, key="wrong-key-123").embed_queries, [["a"], ["b"], ["c"]])
    assert all(isinstance(x, AuthError) for x in out)
    assert len(api.requests) == 1  # not split: the key is not an input's fault


def test_a_short_answer_is_an_error_not_misaligned_rows(api):
    api.faults.wrong_count = 1  # the combined call answers one row short
    out = embed_groups(embedder(api).embed_queries, [["a"], ["b"]])
    np.testing.assert_allclose(out[0][0], fake_vector("a", 64), atol=1e-6)  # retried alone
    np.testing.assert_allclose(out[1][0], fake_vector("b", 64), atol=1e-6)
