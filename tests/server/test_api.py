"""The HTTP API against a real server on loopback: statuses, bodies, limits, auth, logs."""

from __future__ import annotations

import json
import logging
import threading
import time

import httpx
import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from ragsonde.config import Settings
from ragsonde.models import BatchResponse, Response
from ragsonde.retriever import Retriever
from ragsonde.server import create_app
from ragsonde.server.errors import HTTP_STATUS
from ragsonde.testing import FakeEmbeddingAPI
from tests.support import LIDAR, MAX_BODY, closed_port, error_of, run_server


# -- success --------------------------------------------------------------------------------------
def test_query_returns_the_contract_response(api):
    r = api.post("/v1/query", json={"query_text": LIDAR, "top_k": 3, "query_id": "q-1"})
    assert r.status_code == 200, r.text
    resp = Response.model_validate(r.json())
    assert (resp.status, resp.query_id, resp.query, resp.collection) == (
        "success",
        "q-1",
        LIDAR,
        "docs",
    )
    assert resp.total_results == len(resp.results) == 3
    assert resp.results[0].url == "https://docs.example/lidar"
    assert [x.rank for x in resp.results] == [0, 1, 2]
    scores = [x.similarity_score for x in resp.results]
    assert scores == sorted(scores, reverse=True)
    assert resp.timings.embedding_ms > 0 and resp.timings.total_ms >= resp.timings.search_ms
    assert resp.model == "local:sentence-transformers/all-MiniLM-L6-v2"


def test_aliases_threshold_filters_and_minimal_results(api):
    everything = api.post("/v1/query", json={"text": "sensor", "top_k": 9}).json()
    cut = everything["results"][2]["similarity_score"]
    kept = api.post("/v1/query", json={"query": "sensor", "top_k": 9, "threshold": cut}).json()
    assert 1 <= kept["total_results"] < everything["total_results"]
    one = api.post(
        "/v1/query",
        json={"text": "sensor", "filters": {"section": "Sensors > GPS"}, "include_metadata": False},
    ).json()
    assert [set(x) for x in one["results"]] == [{"chunk_id", "text", "similarity_score", "rank"}]


def test_health_ready_and_docs(api):
    assert api.get("/healthz").json() == {"status": "ok"}
    ready = api.get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    assert ready.json()["store"] == "edge" and ready.json()["model_loaded"] is True
    spec = api.get("/openapi.json").json()
    assert {"/v1/query", "/v1/query/batch", "/v1/collections", "/healthz"} <= set(spec["paths"])
    assert {"Query", "BatchRequest", "Response"} <= set(spec["components"]["schemas"])
    body = spec["paths"]["/v1/query"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"] == {"$ref": "#/components/schemas/Query"}
    docs = api.get("/docs")
    assert docs.status_code == 200 and "cdn." not in docs.text  # bundled assets, works offline
    assert api.get("/redoc").status_code == 200


# -- the error map --------------------------------------------------------------------------------
def test_every_error_code_has_its_status():
    assert {c.value: s for c, s in HTTP_STATUS.items()} == {
        "VALIDATION_ERROR": 422,
        "COLLECTION_NOT_FOUND": 404,
        "AUTH_ERROR": 502,
        "EMBEDDING_ERROR": 502,
        "CONNECTION_ERROR": 503,
        "DIMENSION_MISMATCH": 409,
        "LLM_ERROR": 502,
    }


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"query_text": "   "}, "query_text"),
        ({"text": "x", "top_k": 1000}, "top_k"),
        ({"text": "x", "top_k": "five"}, "top_k"),
        ({"text": "x", "score_threshold": 1.5}, "score_threshold"),
        ({"text": "x", "colour": "red"}, "colour"),
        ({"text": "x", "filters": {"colour": "red"}}, "colour"),
        # a value of another kind than the field holds matched nothing: an empty 200
        ({"text": "x", "filters": {"chunk_index": "0"}}, "holds integers"),
        ({"text": "x", "filters": {"url": True}}, "holds text"),
        ({"text": "x", "filters": {"section": ["Sensors > GPS", 1]}}, "with 1"),
        ({"text": "x", "mode": "sparse"}, "dense"),
        ({"text": 42}, "text"),
        ([{"text": "x"}], "object"),
        ("lidar", "object"),
    ],
)
def test_bad_queries_are_422(api, body, field):
    resp = error_of(api.post("/v1/query", json=body), 422, "VALIDATION_ERROR")
    assert field in resp.error.message


@pytest.mark.parametrize(
    "raw",
    [b"{not json", b"", b"   ", b'{"text": "x"', b"\xff\xfe\x00garbage", b"[" * 5000 + b"]" * 5000],
)
def test_malformed_json_is_422_never_500(api, raw):
    r = api.post("/v1/query", content=raw, headers={"content-type": "application/json"})
    resp = error_of(r, 422, "VALIDATION_ERROR")
    assert "JSON" in resp.error.message or "empty" in resp.error.message


def test_unknown_collection_is_404(api):
    resp = error_of(
        api.post("/v1/query", json={"text": "x", "collection": "nope"}), 404, "COLLECTION_NOT_FOUND"
    )
    assert resp.collection == "nope" and "docs" in resp.error.message


def test_dimension_mismatch_is_409(api):
    resp = error_of(
        api.post("/v1/query", json={"text": "x", "collection": "small"}), 409, "DIMENSION_MISMATCH"
    )
    assert "8-dimensional" in resp.error.message


def test_oversized_body_is_413_declared_or_streamed(api):
    big = json.dumps({"text": "x" * (MAX_BODY + 10)}).encode()
    resp = error_of(api.post("/v1/query", content=big), 413, "VALIDATION_ERROR")
    assert str(MAX_BODY) in resp.error.message

    def chunks():
        for _ in range(3):
            yield b" " * (MAX_BODY // 2)
        yield b'{"text": "x"}'

    streamed = api.post("/v1/query/batch", content=chunks())  # chunked: no Content-Length
    error_of(streamed, 413, "VALIDATION_ERROR")
    assert api.get("/healthz").status_code == 200  # the server is fine


def test_unknown_route_and_method_keep_the_error_shape(api):
    error_of(api.get("/v1/nothing-here"), 404, "VALIDATION_ERROR")
    error_of(api.get("/v1/query"), 405, "VALIDATION_ERROR")
    error_of(api.get("/v1/collections/docs", params={"sample": 0}), 422, "VALIDATION_ERROR")


# -- batches --------------------------------------------------------------------------------------
def test_batch_with_one_bad_query_is_partial(api):
    body = {
        "batch_id": "b-1",
        "queries": [
            {"text": LIDAR, "query_id": "good"},
            {"text": "", "query_id": "bad"},
            {"text": "gyroscope drift"},
        ],
    }
    r = api.post("/v1/query/batch", json=body)
    assert r.status_code == 200, r.text
    out = BatchResponse.model_validate(r.json())
    assert (out.batch_id, out.status) == ("b-1", "partial")
    assert [x.status for x in out.responses] == ["success", "error", "success"]
    assert out.responses[1].error.code == "VALIDATION_ERROR"
    assert out.responses[0].results[0].url == "https://docs.example/lidar"


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ({"queries": [{"text": "x"}] * 101}, "at most 100"),
        ({"queries": []}, "queries"),
        ({}, "queries"),
        ({"queries": "x"}, "queries"),
        ([{"text": "x"}], "object"),
    ],
)
def test_bad_batch_envelope_is_422(api, body, needle):
    resp = error_of(api.post("/v1/query/batch", json=body), 422, "VALIDATION_ERROR")
    assert needle in resp.error.message


def test_batch_where_every_query_fails_alike_takes_that_status(api):
    body = {"queries": [{"text": "a"}, {"text": "b"}], "collection": "nope"}
    r = api.post("/v1/query/batch", json=body)
    assert r.status_code == 404
    out = BatchResponse.model_validate(r.json())
    assert out.status == "error"
    assert {x.error.code for x in out.responses} == {"COLLECTION_NOT_FOUND"}


# -- collections ----------------------------------------------------------------------------------
def test_collections(api, docs_count):
    listing = api.get("/v1/collections").json()
    assert listing["default"] == "docs" and listing["backend"] == "edge"
    by_name = {c["name"]: c for c in listing["collections"]}
    assert by_name["docs"]["points_count"] == docs_count and by_name["small"]["dimension"] == 8
    report = api.get("/v1/collections/docs").json()
    assert report["dimension"] == 384 and report["dimension_matches"] is True
    assert report["mapping"]["text"] == "text"
    assert {f["field"] for f in report["fields"]} >= {"text", "url", "section"}
    error_of(api.get("/v1/collections/nope"), 404, "COLLECTION_NOT_FOUND")


# -- auth -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def locked_url(server_settings, retriever):
    settings = server_settings.model_copy(update={"api_key": SecretStr("s3cret-key")})
    with run_server(create_app(settings, retriever)) as url:
        yield url


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong"},
        {"X-API-Key": "s3cret-ke"},
        {"Authorization": "s3cret-key"},
    ],
)
def test_auth_on_refuses_without_the_key(locked_url, headers):
    r = httpx.post(f"{locked_url}/v1/query", json={"text": LIDAR}, headers=headers)
    resp = error_of(r, 401, "AUTH_ERROR")
    assert "s3cret" not in r.text and "Bearer" in resp.error.message
    assert r.headers["www-authenticate"].startswith("Bearer")
    error_of(httpx.get(f"{locked_url}/v1/collections", headers=headers), 401, "AUTH_ERROR")


@pytest.mark.parametrize(
    "headers",
    [
        {"Authorization": "Bearer s3cret-key"},
        {"authorization": "bearer s3cret-key"},
        {"X-API-Key": "s3cret-key"},
    ],
)
def test_auth_on_accepts_the_key(locked_url, headers):
    r = httpx.post(f"{locked_url}/v1/query", json={"text": LIDAR}, headers=headers)
    assert r.status_code == 200 and r.json()["status"] == "success"
    assert httpx.get(f"{locked_url}/v1/collections", headers=headers).status_code == 200


def test_auth_on_leaves_health_and_page_open(locked_url):
    assert httpx.get(f"{locked_url}/healthz").status_code == 200
    assert httpx.get(f"{locked_url}/readyz").status_code == 200
    assert httpx.get(f"{locked_url}/").status_code == 200


def test_auth_off_needs_no_key(api):
    assert api.post("/v1/query", json={"text": LIDAR}).status_code == 200


# -- upstream failures, for real --------------------------------------------------------------------
def test_unreachable_qdrant_is_503(tmp_path, embedder):
    settings = Settings(
        home=tmp_path, qdrant_url=f"http://127.0.0.1:{closed_port()}", qdrant_timeout_s=1
    )
    with run_server(create_app(settings, Retriever(settings, embedder=embedder))) as url:
        resp = error_of(httpx.post(f"{url}/v1/query", json={"text": "x"}), 503, "CONNECTION_ERROR")
        ready = httpx.get(f"{url}/readyz")
    assert "127.0.0.1" in resp.error.message
    assert ready.status_code == 503 and ready.json()["error"]["code"] == "CONNECTION_ERROR"


def _cohere_settings(server_settings: Settings, api: FakeEmbeddingAPI, key: str) -> Settings:
    return server_settings.model_copy(
        update={
            "embedder": "cohere:embed-english-light-v3.0",  # 384-dim, like the `docs` collection
            "cohere_base_url": api.url,
            "cohere_api_key": SecretStr(key),
            "embed_max_retries": 0,
        }
    )


def test_embedding_api_refusing_the_key_is_502(server_settings, filled_store):
    with FakeEmbeddingAPI(api_key="right-key") as fake:
        settings = _cohere_settings(server_settings, fake, "wrong-key-123")
        with run_server(create_app(settings)) as url:  # the app builds and owns its retriever
            r = httpx.post(f"{url}/v1/query", json={"text": "lidar"})
    resp = error_of(r, 502, "AUTH_ERROR")
    assert "wrong-key-123" not in r.text and resp.model == "cohere:embed-english-light-v3.0"


def test_embedding_api_failing_is_502(server_settings, filled_store):
    with FakeEmbeddingAPI(api_key="k") as fake:
        fake.faults.malformed = 5
        settings = _cohere_settings(server_settings, fake, "k")
        with run_server(create_app(settings)) as url:
            r = httpx.post(f"{url}/v1/query", json={"text": "lidar"})
    error_of(r, 502, "EMBEDDING_ERROR")


# -- concurrency and logs -------------------------------------------------------------------------
class SlowEmbedder:
    """The real model, one second slower: shows whether embedding blocks the event loop."""

    def __init__(self, inner):
        self.inner, self.name, self.dimension = inner, inner.name, inner.dimension

    def embed_queries(self, texts):
        time.sleep(1.0)
        return self.inner.embed_queries(texts)

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)


def test_retrieval_runs_off_the_event_loop(server_settings, filled_store, embedder):
    slow = Retriever(server_settings, store=filled_store, embedder=SlowEmbedder(embedder))
    with run_server(create_app(server_settings, slow)) as url:
        answers: list[int] = []

        def ask() -> None:
            answers.append(
                httpx.post(f"{url}/v1/query", json={"text": LIDAR}, timeout=30).status_code
            )

        workers = [threading.Thread(target=ask) for _ in range(4)]
        started = time.perf_counter()
        for w in workers:
            w.start()
        time.sleep(0.2)
        health_s = time.perf_counter()
        assert httpx.get(f"{url}/healthz").status_code == 200
        health_s = time.perf_counter() - health_s
        for w in workers:
            w.join()
        elapsed = time.perf_counter() - started
    assert answers == [200] * 4
    assert health_s < 0.5  # answered while four queries were embedding
    assert elapsed < 2.5  # the four 1 s embeddings overlapped


def test_request_logs_carry_query_id_and_timings_not_secrets(locked_url, caplog):
    with caplog.at_level(logging.INFO, logger="ragsonde.server"):
        r = httpx.post(
            f"{locked_url}/v1/query",
            json={"text": LIDAR, "query_id": "log-me"},
            headers={"Authorization": "Bearer s3cret-key"},
        )
        assert r.status_code == 200
        time.sleep(0.05)  # the request line is logged after the body is sent
    lines = [rec.getMessage() for rec in caplog.records if rec.name == "ragsonde.server"]
    assert any("log-me" in m and "embed" in m and "total" in m for m in lines), lines
    assert any(m.startswith("POST /v1/query -> 200 in") for m in lines), lines
    assert not any("s3cret" in m for m in caplog.text.splitlines())


# -- the command ------------------------------------------------------------------------------------
def test_serve_command_is_registered():
    import ragsonde.cli.serve  # noqa: F401  (registers the command)
    from ragsonde.cli.app import app

    out = CliRunner().invoke(app, ["serve", "--help"])
    assert out.exit_code == 0 and "--host" in out.output and "--port" in out.output


@pytest.mark.slow  # starts `ragsonde serve` in a process
def test_ragsonde_serve_end_to_end(tmp_path):
    """The real command in its own process: start-up loads the model, logs go to stderr."""
    import os
    import subprocess
    import sys

    port = closed_port()
    code = "import ragsonde.cli.serve; from ragsonde.cli import main; main()"
    env = {k: v for k, v in os.environ.items() if k != "RAGSONDE_API_KEY"}
    env["RAGSONDE_HOME"] = str(tmp_path / "home")
    proc = subprocess.Popen(
        [sys.executable, "-c", code, "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, proc.communicate()[1]
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "ragsonde serve did not come up"
            time.sleep(0.2)
        assert httpx.get(f"{url}/readyz").json()["model_loaded"] is True
        r = httpx.post(f"{url}/v1/query", json={"text": "lidar", "query_id": "e2e-1"})
        error_of(r, 404, "COLLECTION_NOT_FOUND")  # an empty store: no rag_embedding yet
        assert "<title>" in httpx.get(f"{url}/").text
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=30)
    assert "query e2e-1 -> error COLLECTION_NOT_FOUND" in stderr, stderr
    assert stderr.count("POST /v1/query -> 404 in") == 1, stderr  # once: not again via root
