"""A query parameter a ``/v1/`` route does not take is a 422 naming it, never dropped.

FastAPI ignores an undeclared query parameter, so a typo answered another question with a 200:
``GET /v1/history/runs?colection=docs`` listed the runs of every collection, and
``/v1/collections/docs?samples=10`` sampled the default number of points. Every ``/v1/``
operation of the server's own OpenAPI document is tried, so a route added later is too.
"""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.slow  # the real model behind a real server


def test_every_v1_operation_refuses_a_parameter_it_does_not_take(api):
    doc = api.get("/openapi.json").json()
    tried = 0
    for path, item in doc["paths"].items():
        if not path.startswith("/v1/"):
            continue
        for method in item:
            url = re.sub(r"\{[^}]+\}", "docs", path)
            r = api.request(method.upper(), url, params={"colection": "docs"})
            assert r.status_code == 422, (method, url, r.status_code, r.text[:200])
            message = r.json()["error"]["message"]
            assert "Unknown query parameter 'colection'" in message, message
            tried += 1
    assert tried >= 15
    assert api.get("/healthz", params={"x": "1"}).status_code == 200  # probes take anything


@pytest.mark.parametrize(
    ("url", "params"),
    [
        ("/v1/history/runs", {"collection": "docs", "benchmark": "b"}),
        ("/v1/collections/docs", {"sample": "5"}),
    ],
)
def test_declared_parameters_still_answer(api, url, params):
    r = api.get(url, params=params)
    assert r.status_code == 200, r.text
    named = api.get(url, params={**params, "samples": "9"})
    assert named.status_code == 422 and "this route takes" in named.json()["error"]["message"]
    for declared in params:
        assert declared in named.json()["error"]["message"]


@pytest.mark.parametrize("url", ["/v1/history/runs", "/v1/history/trend"])
@pytest.mark.parametrize("name", ["collection", "benchmark"])
def test_a_filter_named_but_empty_is_refused_not_dropped(api, url, name):
    # ?collection= listed every collection's runs with a 200, as if no filter were named
    r = api.get(url, params={name: ""})
    assert r.status_code == 422 and r.json()["error"]["code"] == "VALIDATION_ERROR", r.text
    assert name in r.json()["error"]["message"]
