"""Fuzzing every HTTP route's body and path (issue 33.7), beside the schema-driven fuzzing of
test_schemathesis.py: hostile values (lone surrogates, NUL, huge, zero and negative numbers,
very long strings, deep nesting, bytes that are not UTF-8) in the fields each route documents
and anywhere else.

The routes are read from the server's own OpenAPI document, so a route added later (``/mcp``)
is fuzzed too. Every answer must be below 500, an error must be the contract's JSON error body,
the server must still answer ``/healthz`` after each request, and every eval job the bodies
started must end with a message if it failed (never ``error: null``).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragsonde.server import create_app
from tests.fuzz.hostile import FUZZ, JSON, TEXT, fuzz
from tests.support import run_server

pytestmark = pytest.mark.slow  # the real model behind a real server

EXAMPLES = 40
#: Raw bodies JSON encoders will not make: deeper than any parser's stack, not UTF-8, NUL, an
#: integer of 5,000 digits (over Python's int parsing limit), a float over the double range.
RAW_BODIES = [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    b'{"text": "\xff\xfe"}',
    b'{"text": "a\x00b"}',
    b'{"text": "a\\u0000b", "top_k": ' + b"9" * 5000 + b"}",
    b'{"text": "x", "top_k": 1e999}',
    b'{"benchmark": [{"query_id": "\\udc80", "query": "q", "relevant": ["\\ud800"]}]}',
    b"\xef\xbb\xbf{}",
    b"",
]


@pytest.fixture(scope="module")
def url(server_settings, retriever, tmp_path_factory) -> Iterator[str]:
    """A server of its own (auth off, a home of its own), so fuzzing leaves the shared one be."""
    home = tmp_path_factory.mktemp("fuzzhttp") / "home"
    settings_ = server_settings.model_copy(update={"api_key": None, "home": home})
    with run_server(create_app(settings_, retriever)) as served:
        yield served


@pytest.fixture(scope="module")
def routes(url) -> list[tuple[str, str, list[str]]]:
    """(method, path, the body's documented fields) for every documented operation."""
    doc = httpx.get(f"{url}/openapi.json").json()
    out = []
    for path, item in doc["paths"].items():
        for method, op in item.items():
            schema = (op.get("requestBody", {}).get("content", {}).get("application/json", {})).get(
                "schema", {}
            )
            if "$ref" in schema:
                schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
            out.append((method.upper(), path, sorted(schema.get("properties", {}))))
    return out


def _check(client: httpx.Client, r: httpx.Response, shown: str) -> None:
    assert r.status_code < 500, f"{shown} -> {r.status_code} {r.text[:500]}"
    if r.status_code >= 400:
        assert r.headers["content-type"].startswith("application/json"), shown
        body = r.json()
        error = body.get("error") if "responses" not in body else body["responses"][0]["error"]
        assert error["code"] and error["message"], shown
    assert client.get("/healthz").status_code == 200, f"the server died on {shown}"


def _quoted(value: str) -> str:
    """``value`` percent-encoded byte for byte; a lone surrogate as its CESU-8 bytes (not UTF-8)."""
    return quote(value.encode("utf-8", "surrogatepass"), safe="")


def _fill(path: str, value: str) -> str:
    return re.sub(r"\{[^}]+\}", _quoted(value), path)


def test_hostile_bodies_and_paths_on_every_route(url, routes) -> None:
    bodies = {(m, p): fields for m, p, fields in routes}
    ops = sorted(bodies)

    def body(fields: list[str]) -> st.SearchStrategy[Any]:
        known = st.fixed_dictionaries({}, optional=dict.fromkeys(fields, JSON))
        return st.one_of(known, JSON) if fields else JSON

    with httpx.Client(base_url=url, timeout=120) as client:

        @settings(FUZZ, max_examples=EXAMPLES * len(ops) // 4)
        @given(op=st.sampled_from(ops), data=st.data(), segment=TEXT)
        def run(op: tuple[str, str], data: st.DataObject, segment: str) -> None:
            method, path = op
            target = _fill(path, "x" + segment)
            if method in {"POST", "PUT", "PATCH"}:
                payload = json.dumps(data.draw(body(bodies[op])))  # surrogates as \\u escapes
                r = client.request(
                    method, target, content=payload, headers={"content-type": "application/json"}
                )
                _check(client, r, f"{method} {target} {payload[:300]}")
            else:
                query = data.draw(st.dictionaries(TEXT, TEXT, max_size=2))
                pairs = [f"{_quoted(k)}={_quoted(v)}" for k, v in query.items()]
                target += "?" + "&".join(pairs) if pairs else ""
                _check(client, client.request(method, target), f"{method} {target}")

        fuzz(run)
        for method, path, _ in routes:
            if method == "POST":
                for raw in RAW_BODIES:
                    r = client.post(
                        _fill(path, "x"), content=raw, headers={"content-type": "application/json"}
                    )
                    _check(client, r, f"POST {path} {raw[:80]!r}")
        _jobs_end_with_a_message(client)


def _jobs_end_with_a_message(client: httpx.Client) -> None:
    """Every job the bodies started ends, and a failed one says why."""
    deadline = time.monotonic() + 300
    while True:
        jobs = client.get("/v1/eval").json()
        if all(j["status"] not in {"queued", "running"} for j in jobs):
            break
        assert time.monotonic() < deadline, jobs
        time.sleep(0.5)
    for job in jobs:
        if job["status"] == "error":
            assert job["error"] and job["error"]["message"], job
