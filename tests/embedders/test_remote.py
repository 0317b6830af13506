"""Cohere and OpenAI-compatible embedders against a real loopback server speaking their APIs."""

from __future__ import annotations

import time

import numpy as np
import pytest

from ragsonde.config import Settings
from ragsonde.embedders import get_embedder
from ragsonde.embedders.cohere import CohereEmbedder
from ragsonde.embedders.openai import OpenAIEmbedder
from ragsonde.errors import AuthError, EmbeddingError, RagsondeError
from ragsonde.testing import FakeEmbeddingAPI, fake_vector

KEY = "sk-test-secret-key-123456"


@pytest.fixture
def api():
    with FakeEmbeddingAPI(api_key=KEY) as server:
        yield server


def cohere(api, **kw) -> CohereEmbedder:
    s = Settings(
        cohere_base_url=api.url,
        cohere_api_key=kw.pop("key", KEY),
        embed_max_retries=kw.pop("retries", 3),
        embed_timeout_s=kw.pop("timeout", 5.0),
        embed_deadline_s=kw.pop("deadline", 30.0),
    )
    return CohereEmbedder.from_settings("embed-english-v3.0", s)


def openai(api, **kw) -> OpenAIEmbedder:
    s = Settings(
        openai_base_url=f"{api.url}/v1",
        openai_api_key=kw.pop("key", KEY),
        embed_max_retries=kw.pop("retries", 3),
        embed_timeout_s=kw.pop("timeout", 5.0),
        embed_deadline_s=kw.pop("deadline", 30.0),
    )
    return OpenAIEmbedder.from_settings(kw.pop("model", "my-local-model"), s)


def test_cohere_wire_format_and_input_types(api):
    emb = cohere(api)
    q = emb.embed_queries(["what is lidar"])
    d = emb.embed_documents(["what is lidar"])
    assert q.shape == (1, 1024) and q.dtype == np.float32 and emb.dimension == 1024
    assert np.allclose(q[0], fake_vector("what is lidar", 1024, "search_query"), atol=1e-6)
    assert not np.allclose(q, d)  # different input_type, different vector
    first, second = api.requests
    assert first.path == "/v2/embed"
    assert first.body == {
        "model": "embed-english-v3.0",
        "texts": ["what is lidar"],
        "input_type": "search_query",
        "embedding_types": ["float"],
    }
    assert second.body["input_type"] == "search_document"
    assert first.headers["Authorization"] == f"Bearer {KEY}"


def test_cohere_batches_at_96_and_keeps_order(api):
    texts = [f"doc {i}" for i in range(200)]
    vecs = cohere(api).embed_documents(texts)
    assert [len(r.body["texts"]) for r in api.requests] == [96, 96, 8]
    assert np.allclose(vecs[150], fake_vector("doc 150", 1024, "search_document"), atol=1e-6)


def test_openai_wire_format_sorts_by_index_and_learns_dimension(api):
    emb = openai(api)
    vecs = emb.embed_documents(["a", "b", "c"])
    assert emb.dimension == 64 and vecs.shape == (3, 64)
    assert np.allclose(vecs[0], fake_vector("a", 64), atol=1e-6)  # server answered reversed
    req = api.requests[0]
    assert req.path == "/v1/embeddings"
    assert req.body == {
        "model": "my-local-model",
        "input": ["a", "b", "c"],
        "encoding_format": "float",
    }


@pytest.mark.parametrize("make", [cohere, openai])
def test_retries_on_429_and_503_then_succeed(api, make):
    api.faults.rate_limited, api.faults.unavailable = 1, 1
    assert make(api).embed_queries(["x"]).shape[0] == 1
    assert len(api.requests) == 3


@pytest.mark.parametrize("make", [cohere, openai])
def test_gives_up_after_max_retries(api, make):
    api.faults.unavailable = 10
    with pytest.raises(EmbeddingError, match="503 after 3 attempts"):
        make(api, retries=2).embed_queries(["x"])
    assert len(api.requests) == 3


@pytest.mark.parametrize("make", [cohere, openai])
def test_bad_key_is_auth_error_without_the_key(api, make):
    with pytest.raises(AuthError) as info:
        make(api, key="sk-wrong-key-999999").embed_queries(["x"])
    msg = str(info.value)
    assert "401" in msg and "sk-wrong-key-999999" not in msg
    assert ("invalid api token" in msg) or ("Incorrect API key" in msg)


def test_missing_cohere_key_says_what_to_set():
    with pytest.raises(AuthError, match="COHERE_API_KEY"):
        CohereEmbedder.from_settings("embed-english-v3.0", Settings(cohere_api_key=None))


@pytest.mark.parametrize("make", [cohere, openai])
def test_timeout_is_an_embedding_error_quickly(api, make):
    api.faults.delay_s = 2.0
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match="timed out"):
        make(api, timeout=0.2, retries=1).embed_queries(["x"])
    assert time.monotonic() - started < 2.0


@pytest.mark.parametrize("make", [cohere, openai])
def test_a_hung_api_is_bounded_by_one_deadline_across_retries(api, make):
    """Issue 13.5: timeout 1 s x 5 attempts would be 5 s plus backoff; the deadline is 1.5 s."""
    api.faults.hang = True
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match=r"deadline 1\.5 s") as info:
        make(api, timeout=1.0, retries=4, deadline=1.5).embed_queries(["x"])
    elapsed = time.monotonic() - started
    assert 1.0 <= elapsed < 2.5, elapsed
    assert 2 <= len(api.requests) <= 3  # it did retry, within the deadline
    assert KEY not in str(info.value)
    assert "raise RAGSONDE_EMBED_TIMEOUT_S / RAGSONDE_EMBED_DEADLINE_S" in str(info.value)


@pytest.mark.parametrize("make", [cohere, openai])
def test_the_deadline_spans_every_request_of_one_call(api, make):
    """Cohere sends 96 texts a request: 3 requests for 200 texts share one deadline."""
    api.faults.delay_s = 0.4
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match="timed out"):
        make(api, timeout=5.0, retries=0, deadline=0.6).embed_documents(
            [f"d{i}" for i in range(600)]
        )
    assert time.monotonic() - started < 1.5


def test_retry_after_is_honoured_and_capped(api):
    api.faults.rate_limited, api.faults.retry_after = 1, "0.5"
    started = time.monotonic()
    assert cohere(api).embed_queries(["x"]).shape[0] == 1
    assert 0.5 <= time.monotonic() - started < 3.0
    assert len(api.requests) == 2


@pytest.mark.parametrize("make", [cohere, openai])
@pytest.mark.parametrize("fault", ["malformed", "wrong_count"])
def test_bad_bodies_are_embedding_errors(api, make, fault):
    setattr(api.faults, fault, 1)
    with pytest.raises(EmbeddingError):
        make(api).embed_documents(["a", "b"])


@pytest.mark.parametrize("make", [cohere, openai])
@pytest.mark.parametrize(
    "breakage",
    ["refused", "timeout", "auth", "malformed", "rate_limited", "wrong_count"],
)
def test_no_httpx_exception_ever_escapes(api, make, breakage):
    kw = {}
    if breakage == "refused":
        emb = make(api)
        api.__exit__(None, None, None)  # nobody listens on that port any more
    else:
        if breakage == "timeout":
            api.faults.delay_s, kw = 1.0, {"timeout": 0.1, "retries": 0}
        elif breakage == "auth":
            kw = {"key": "nope-nope"}
        elif breakage == "rate_limited":
            api.faults.rate_limited, kw = 5, {"retries": 0}
        else:
            setattr(api.faults, breakage, 1)
        emb = make(api, **kw)
    with pytest.raises(RagsondeError) as info:
        emb.embed_queries(["x", "y"])
    assert type(info.value).__module__ == "ragsonde.errors"


def test_registry_builds_remote_embedders(api):
    s = Settings(embedder="cohere:embed-english-v3.0", cohere_base_url=api.url, cohere_api_key=KEY)
    assert get_embedder(s).name == "cohere:embed-english-v3.0"
    s2 = Settings(embedder="openai:text-embedding-3-small", openai_base_url=f"{api.url}/v1")
    assert get_embedder(s2).dimension == 1536


def test_unknown_embedder_scheme_lists_the_known_ones():
    from ragsonde.errors import QueryValidationError

    with pytest.raises(QueryValidationError, match=r"'cohere:<model>'.*'local:<model>'"):
        get_embedder(Settings(embedder="magic:thing"))
