"""Hostile input over HTTP (issue 13): bad text fails alone, only JSON bodies, no plain-text 500.

A real server on loopback over the real model; the main tests use the micro-batching server, so
good and bad queries sent together share the model's calls.
"""

from __future__ import annotations

import gzip
import json
import logging
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from ragsonde.models import BatchResponse
from ragsonde.retriever import Retriever
from ragsonde.server import create_app
from ragsonde.server.batcher import MicroBatchingEmbedder
from tests.support import LIDAR, TEXTS, error_of, run_server, together

pytestmark = pytest.mark.slow

#: A lone surrogate, as JSON carries it (the escape, not the character: the body is valid JSON).
LONE = '"lidar \\ud800 range"'


@pytest.fixture(scope="module")
def batched_url(server_settings, filled_store, embedder) -> Iterator[str]:
    batcher = MicroBatchingEmbedder(embedder, window_ms=50)
    retriever = Retriever(server_settings, store=filled_store, embedder=batcher)
    with run_server(create_app(server_settings, retriever)) as url:
        yield url
    batcher.close()


def post_raw(url: str, path: str, raw: str, ctype: str = "application/json") -> httpx.Response:
    return httpx.post(
        f"{url}{path}", content=raw.encode(), headers={"content-type": ctype}, timeout=60
    )


@pytest.mark.parametrize(
    "body",
    [
        f'{{"text": {LONE}}}',
        f'{{"text": "x", "filters": {{"url": {LONE}}}}}',
        f'{{"text": "x", "filters": {{"section": ["a", {LONE}]}}}}',
        f'{{"text": "x", "filters": {{{LONE}: "a"}}}}',
        f'{{"text": "x", "collection": {LONE}}}',
        f'{{"text": "x", "query_id": {LONE}}}',
    ],
)
def test_invalid_unicode_is_a_422_contract_body(batched_url, body):
    resp = error_of(post_raw(batched_url, "/v1/query", body), 422, "VALIDATION_ERROR")
    assert "Unicode" in resp.error.message


def test_a_bad_query_among_concurrent_good_ones_fails_alone(batched_url):
    bodies = [json.dumps({"text": t, "top_k": 2}) for t in TEXTS]
    bodies.insert(3, f'{{"text": {LONE}, "top_k": 2}}')
    for _ in range(2):
        got = together(lambda b: post_raw(batched_url, "/v1/query", b), bodies)
        assert [r.status_code for r in got] == [200] * 3 + [422] + [200] * len(TEXTS[3:])
        error_of(got[3], 422, "VALIDATION_ERROR")


def test_a_bad_query_in_a_batch_is_its_own_error(batched_url):
    raw = (
        '{"batch_id": "b-h", "queries": ['
        f'{{"text": "{LIDAR}", "query_id": "good"}}, {{"text": {LONE}, "query_id": "bad"}}]}}'
    )
    r = post_raw(batched_url, "/v1/query/batch", raw)
    assert r.status_code == 200, r.text
    out = BatchResponse.model_validate(r.json())
    assert out.status == "partial"
    good, bad = out.responses
    assert good.status == "success" and good.results
    assert bad.status == "error" and bad.error is not None
    assert bad.error.code == "VALIDATION_ERROR" and bad.query_id == "bad"
    assert "\ufffd" in bad.query  # echoed, with the lone surrogate replaced


@pytest.mark.parametrize(
    ("ctype", "raw"),
    [
        ("text/plain", '{"text": "lidar"}'),  # what a cross-site <form enctype=text/plain> sends
        ("application/x-www-form-urlencoded", "text=lidar"),
        ("multipart/form-data; boundary=x", '--x\r\nContent-Disposition: form-data; name="t"'),
        ("", '{"text": "lidar"}'),
    ],
)
def test_only_json_bodies_are_accepted(batched_url, ctype, raw):
    for path in ("/v1/query", "/v1/query/batch"):
        r = httpx.post(
            f"{batched_url}{path}",
            content=raw.encode(),
            headers={"content-type": ctype} if ctype else {},
            timeout=30,
        )
        resp = error_of(r, 415, "VALIDATION_ERROR")
        assert "application/json" in resp.error.message


def test_json_with_a_charset_is_json(batched_url):
    r = post_raw(
        batched_url, "/v1/query", json.dumps({"text": LIDAR}), "application/json; charset=utf-8"
    )
    assert r.status_code == 200, r.text


def test_a_compressed_body_is_415_not_unreadable_json(api):
    """A gzip body was decoded as JSON and refused as "not UTF-8 or nested too deeply"."""
    raw = gzip.compress(json.dumps({"text": LIDAR}).encode())
    for path in ("/v1/query", "/v1/query/batch", "/v1/eval", "/v1/judge/pool", "/v1/traffic"):
        headers = {"content-type": "application/json", "content-encoding": "gzip"}
        resp = error_of(api.post(path, content=raw, headers=headers), 415, "VALIDATION_ERROR")
        assert "Content-Encoding: gzip" in resp.error.message, path
    identity = {"content-type": "application/json", "content-encoding": "identity"}
    assert api.post("/v1/query", json={"text": LIDAR}, headers=identity).status_code == 200


@pytest.mark.parametrize(
    "path", ["/", "/healthz", "/readyz", "/v1/collections", "/v1/eval", "/static/app.js"]
)
def test_head_is_get_without_the_body(api, path):
    """Every GET route was a 405 to HEAD (a monitor probing HEAD /healthz saw the server down)."""
    got, head = api.get(path), api.head(path)
    assert got.status_code == 200, got.text
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-type"] == got.headers["content-type"]
    assert head.headers["content-length"] == got.headers["content-length"]


def test_head_on_a_post_route_is_405_allowing_post(api):
    head = api.head("/v1/query")
    assert head.status_code == 405 and head.headers["allow"] == "POST" and head.content == b""
    assert api.put("/v1/collections").headers["allow"] == "GET, HEAD"


class _Buggy:
    """The real store, with a bug in its search (a plain exception, as a bug would raise)."""

    def __init__(self, store):
        self._store = store

    def __getattr__(self, name: str):
        return getattr(self._store, name)

    def search(self, *args, **kwargs):
        raise ZeroDivisionError("secret internals")


def test_an_unhandled_exception_is_a_json_contract_body(server_settings, filled_store, embedder):
    retriever = Retriever(server_settings, store=_Buggy(filled_store), embedder=embedder)
    with run_server(create_app(server_settings, retriever)) as url:
        r = httpx.post(f"{url}/v1/query", json={"text": LIDAR}, timeout=30)
        resp = error_of(r, 500, "CONNECTION_ERROR")
        assert "ZeroDivisionError" in resp.error.message
        assert "secret internals" not in r.text
        assert httpx.get(f"{url}/healthz").status_code == 200


def test_a_client_gone_before_its_body_ended_logs_no_traceback(batched_url, caplog):
    """A body cut short (Content-Length 1000, ten bytes sent, then the connection closed) was
    an unhandled ClientDisconnect: two ERROR tracebacks a request in the server's log."""
    where = urlsplit(batched_url)
    with caplog.at_level(logging.INFO):
        for path in ("/v1/query", "/v1/eval"):
            with socket.create_connection((where.hostname, where.port)) as s:
                s.sendall(
                    f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    'Content-Length: 1000\r\n\r\n{"query'.encode()
                )
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            said = [r.getMessage() for r in caplog.records]
            if sum("went away" in m or "unhandled" in m for m in said) >= 2:
                break
            time.sleep(0.1)
        assert httpx.get(f"{batched_url}/healthz", timeout=30).status_code == 200
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == []
    assert sum("went away" in r.getMessage() for r in caplog.records) == 2
