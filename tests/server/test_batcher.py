"""Micro-batching (``ragsonde.server.batcher``): concurrent callers each get their own vectors."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

from ragsonde.errors import EmbeddingError
from ragsonde.retriever import Retriever
from ragsonde.server import create_app
from ragsonde.server.batcher import MicroBatchingEmbedder
from tests.support import TEXTS, run_server, together


def test_concurrent_callers_get_their_own_vectors(embedder):
    alone = {t: embedder.embed_queries([t])[0] for t in TEXTS}
    batcher = MicroBatchingEmbedder(embedder, window_ms=20, max_batch=8)
    try:
        for _ in range(3):
            out = together(lambda t: batcher.embed_queries([t]), TEXTS)
            for text, vecs in zip(TEXTS, out, strict=True):
                assert vecs.shape == (1, embedder.dimension)
                np.testing.assert_allclose(vecs[0], alone[text], atol=2e-5)
    finally:
        batcher.close()
    assert max(batcher.batch_sizes) > 1  # they were embedded together
    assert max(batcher.batch_sizes) <= 8  # and never more than max_batch at once
    assert sum(batcher.batch_sizes) == 3 * len(TEXTS)


def test_multi_text_calls_get_their_rows_in_order(embedder):
    calls = [TEXTS[i : i + 3] for i in range(0, len(TEXTS), 3)]  # 4 calls of 3 texts
    batcher = MicroBatchingEmbedder(embedder, window_ms=20, max_batch=7)
    try:
        out = together(batcher.embed_queries, calls)
    finally:
        batcher.close()
    for texts, vecs in zip(calls, out, strict=True):
        np.testing.assert_allclose(vecs, embedder.embed_queries(texts), atol=2e-5)
    assert all(n <= 7 for n in batcher.batch_sizes) and sum(batcher.batch_sizes) == 12
    assert max(batcher.batch_sizes) > 3  # two calls shared a model call


class Exploding:
    """The real model, except that it fails on a poisoned text, as a remote API would."""

    def __init__(self, inner):
        self.inner, self.name, self.dimension = inner, inner.name, inner.dimension

    def embed_queries(self, texts):
        if any("boom" in t for t in texts):
            raise EmbeddingError("the model failed")
        return self.inner.embed_queries(texts)

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)


def test_an_embedding_error_fails_only_the_caller_whose_text_caused_it(embedder):
    """Issue 13: the group fails, is split, and each request is retried alone."""
    poisoned = Exploding(embedder)
    batcher = MicroBatchingEmbedder(poisoned, window_ms=200, max_batch=64)

    def call(text):
        try:
            return batcher.embed_queries([text])
        except EmbeddingError as e:
            return e

    try:
        out = together(call, ["boom", *TEXTS[:5]])
        assert isinstance(out[0], EmbeddingError)  # the bad text fails...
        for text, vecs in zip(TEXTS[:5], out[1:], strict=True):  # ...alone
            assert not isinstance(vecs, Exception), vecs
            np.testing.assert_allclose(vecs[0], embedder.embed_queries([text])[0], atol=2e-5)
        assert max(batcher.batch_sizes) > 1  # they did share the first, failing, call
        assert batcher.embed_queries(["fine"]).shape == (1, embedder.dimension)  # not stuck
    finally:
        batcher.close()


def test_a_broken_model_still_reaches_every_caller(embedder):
    class Broken(Exploding):
        def embed_queries(self, texts):
            raise EmbeddingError("the model is gone")

    batcher = MicroBatchingEmbedder(Broken(embedder), window_ms=100, max_batch=64)

    def call(text):
        try:
            return batcher.embed_queries([text])
        except EmbeddingError as e:
            return e

    try:
        out = together(call, TEXTS[:4])
        assert all(isinstance(x, EmbeddingError) for x in out)  # an error, never a hang
    finally:
        batcher.close()


def test_close_stops_the_thread_and_later_calls_go_direct(embedder):
    batcher = MicroBatchingEmbedder(embedder, window_ms=1)
    batcher.embed_queries(["warm"])
    thread = batcher._thread
    assert thread is not None and thread.is_alive()
    batcher.close()
    assert not thread.is_alive()
    np.testing.assert_allclose(
        batcher.embed_queries([TEXTS[0]]), embedder.embed_queries([TEXTS[0]]), atol=2e-5
    )
    assert batcher.name == embedder.name and batcher.dimension == embedder.dimension


def test_bad_arguments_are_refused(embedder):
    with pytest.raises(ValueError, match="exactly one"):
        MicroBatchingEmbedder()
    with pytest.raises(ValueError, match="max_batch"):
        MicroBatchingEmbedder(embedder, max_batch=0)


def test_the_setting_puts_the_batcher_in_front_of_the_model(server_settings):
    on = {"microbatch": True, "microbatch_ms": 3, "microbatch_max": 9}
    app = create_app(server_settings.model_copy(update=on))
    state = app.state.ragsonde
    assert isinstance(state.batcher, MicroBatchingEmbedder)
    assert state.retriever.embedder is state.batcher
    assert (state.batcher.window_s, state.batcher.max_batch) == (0.003, 9)
    assert state.retriever.model_name == server_settings.embedder  # the model is not loaded yet
    off = server_settings.model_copy(update={"microbatch": False})
    assert create_app(off).state.ragsonde.batcher is None


@pytest.mark.parametrize(
    ("embedder", "batched"),
    [
        ("local:sentence-transformers/all-MiniLM-L6-v2?backend=torch", True),
        ("local:sentence-transformers/all-MiniLM-L6-v2?backend=onnx", False),
        ("local:sentence-transformers/all-MiniLM-L6-v2", False),  # ONNX, the default backend
        ("cohere:embed-v4.0", False),
        ("nope:model", False),  # a bad setting: unbatched, and it surfaces at warm-up as before
    ],
)
def test_unset_batches_the_torch_model_only(server_settings, embedder, batched):
    settings = server_settings.model_copy(update={"embedder": embedder, "microbatch": None})
    assert (create_app(settings).state.ragsonde.batcher is not None) is batched


def test_batched_server_answers_each_query_as_the_unbatched_one(
    server_settings, filled_store, embedder, base_url
):
    batcher = MicroBatchingEmbedder(embedder, window_ms=20)
    batched = Retriever(server_settings, store=filled_store, embedder=batcher)
    with run_server(create_app(server_settings, batched)) as url:
        got = together(
            lambda t: httpx.post(f"{url}/v1/query", json={"text": t, "top_k": 3}, timeout=30),
            TEXTS,
        )
    batcher.close()
    for text, r in zip(TEXTS, got, strict=True):
        assert r.status_code == 200, r.text
        want = httpx.post(f"{base_url}/v1/query", json={"text": text, "top_k": 3}).json()
        assert [x["chunk_id"] for x in r.json()["results"]] == [
            x["chunk_id"] for x in want["results"]
        ]
        np.testing.assert_allclose(
            [x["similarity_score"] for x in r.json()["results"]],
            [x["similarity_score"] for x in want["results"]],
            atol=1e-4,
        )
    assert max(batcher.batch_sizes) > 1
