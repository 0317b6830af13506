"""The OpenAPI document says what the server does, found by running schemathesis (every check,
``-c all``) against a real ``ragsonde serve``:

- ST205: a 405's ``Allow`` named only the first route whose path matched (``OPTIONS /v1/eval``:
  ``Allow: POST``, where GET is served too); RFC 9110 wants every method of the resource.
- Unresolvable references: the raw bodies of /v1/eval and /v1/traffic carried their own
  ``$defs``, and ``#/$defs/SearchParams`` resolves against the document's root, where there is
  none: their ``search`` block was never fuzzed, and a client generator stops there.
- ST202: the collection and benchmark names in paths and in the pool body had no pattern, so
  names the server refuses (``[iZ``, ``x.benchmark``) were schema-valid.
- ST201: ``"benchmark": ""`` and ``"collection": ""`` in ``/v1/judge/pool`` were answered 200,
  as if absent (no grades shown; the default collection), without a word; so was
  ``"collection": ""`` in ``/v1/eval`` (by hand: the job evaluated the default collection).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.support import LIDAR

pytestmark = pytest.mark.slow  # the real model behind a real server


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("OPTIONS", "/v1/eval", "GET, HEAD, POST"),  # HEAD: a GET without its body
        ("PUT", "/v1/eval/abc", "DELETE, GET, HEAD"),
        ("PATCH", "/v1/query", "POST"),
        ("DELETE", "/v1/judge/benchmarks/b1", "GET, HEAD"),
    ],
)
def test_a_405_allows_every_method_of_the_path(api, method, path, allow):
    r = api.request(method, path)
    assert r.status_code == 405 and r.json()["error"]["code"] == "VALIDATION_ERROR", r.text
    assert r.headers["allow"] == allow


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_every_reference_resolves_in_the_document(api):
    doc = api.get("/openapi.json").json()
    refs = set(_refs(doc))
    assert refs and not [r for r in refs if not r.startswith("#/components/schemas/")], refs
    missing = {r for r in refs if r.rsplit("/", 1)[-1] not in doc["components"]["schemas"]}
    assert not missing
    eval_body = doc["paths"]["/v1/eval"]["post"]["requestBody"]["content"]["application/json"]
    assert "$defs" not in json.dumps(eval_body)
    assert eval_body["schema"]["properties"]["search"]["$ref"].endswith("/SearchParams")


def _param_pattern(doc: dict[str, Any], path: str, method: str = "get") -> re.Pattern[str]:
    (param,) = [p for p in doc["paths"][path][method]["parameters"] if p["name"] == "name"]
    return re.compile(param["schema"]["pattern"])


@pytest.mark.parametrize("name", ["docs", "small", "[iZ", "-x", "a b", "x" * 300])
def test_collection_names_the_schema_allows_are_the_names_served(api, name):
    pattern = _param_pattern(api.get("/openapi.json").json(), "/v1/collections/{name}")
    r = api.get(f"/v1/collections/{name}")
    allowed = bool(pattern.fullmatch(name)) and len(name) <= 255
    assert allowed == (r.status_code == 200), (name, r.status_code, r.text[:200])
    assert api.get("/healthz").status_code == 200


@pytest.mark.parametrize("name", ["typed-b", "b_1.jsonl", "x.benchmark", "../b", "-b", "é"])
def test_benchmark_names_the_schema_allows_are_the_names_served(api, name):
    doc = api.get("/openapi.json").json()
    pattern = _param_pattern(doc, "/v1/judge/benchmarks/{name}")
    body = doc["paths"]["/v1/judge/pool"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"]["properties"]["benchmark"]["pattern"] == pattern.pattern
    r = api.get(f"/v1/judge/benchmarks/{name}")
    assert bool(pattern.fullmatch(name)) == (r.status_code == 200), (name, r.text[:200])


@pytest.mark.parametrize("field", ["benchmark", "collection"])
def test_an_empty_name_in_a_pool_is_refused_not_taken_for_none(api, field):
    r = api.post("/v1/judge/pool", json={"query": LIDAR, field: ""})
    assert r.status_code == 422, r.text
    assert r.json()["error"]["code"] == "VALIDATION_ERROR"
    assert api.post("/v1/judge/pool", json={"query": LIDAR}).status_code == 200


def test_an_empty_collection_starts_no_evaluation_of_the_default_one(api):
    # it was a 202, and the job evaluated the default collection
    before = api.get("/v1/eval").json()
    rows = [{"query_id": "q1", "query": LIDAR, "relevant": ["lidar"]}]
    r = api.post("/v1/eval", json={"benchmark": rows, "collection": "", "throughput": False})
    assert r.status_code == 422 and "collection" in r.json()["error"]["message"], r.text
    assert api.get("/v1/eval").json() == before
