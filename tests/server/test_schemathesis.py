"""Property-based tests of the HTTP API from its own OpenAPI document (schemathesis 4).

A real server on loopback (auth off) serves ``/openapi.json``; for every operation schemathesis
generates requests, valid and invalid, and every response must be no 5xx, with a status, a
content type and a body the document declares (checks ``not_a_server_error``,
``status_code_conformance``, ``content_type_conformance``, ``response_schema_conformance``).
Examples are bounded so the fuzzing takes well under a minute after the server's start-up.

The operations are driven with ``APIOperation.as_strategy`` and Hypothesis' ``@given``, not with
``schemathesis.pytest.from_fixture``: that plugin sets ``Function._nodeid``, which pytest 9 no
longer has. A test checks that the list fuzzed here is the list the server documents, so a new
route cannot go unfuzzed.

``POST /v1/eval`` starts an evaluation job when its body is valid; only its validation is cheap.
So its generated bodies are bent (:func:`_no_job`) to be refused for a reason the generator
cannot undo: a ``dataset`` outside the server's dataset folders, or both ``dataset`` and
``benchmark``. Every one
must then be a 4xx error Response and no job may start; the jobs themselves are tested in
``test_eval_api.py``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from ragsonde.server import create_app
from tests.support import run_server

CHECKS = [
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
    content_type_conformance,
]
EXAMPLES = 100

#: Every operation the server documents (a test checks the two lists agree).
OPERATIONS = (
    "GET /healthz",
    "GET /readyz",
    "GET /v1/health",
    "POST /v1/query",
    "POST /v1/query/batch",
    "GET /v1/collections",
    "GET /v1/collections/{name}",
    "GET /v1/eval",
    "POST /v1/eval",
    "GET /v1/eval/{job_id}",
    "DELETE /v1/eval/{job_id}",
    "GET /v1/eval/{job_id}/report.html",
    "GET /v1/judge/benchmarks",
    "GET /v1/judge/benchmarks/{name}",
    "POST /v1/judge/pool",
    "POST /v1/judge/benchmarks/{name}/grades",
    "GET /v1/judge/benchmarks/{name}/export",
    "GET /v1/judge/benchmarks/{name}/agreement",
    "GET /v1/history/runs",
    "GET /v1/history/trend",
    "GET /v1/history/diff",
    "POST /v1/traffic",
)
NO_SUCH_DIR = "/nonexistent-ragsonde-fuzz/"


def _no_job(case: schemathesis.Case) -> schemathesis.Case:
    """Bend a ``POST /v1/eval`` body so the server must refuse it (see the module docstring)."""
    body = case.body
    if isinstance(body, dict):
        dataset = body.get("dataset")
        if isinstance(dataset, str):
            body["dataset"] = NO_SUCH_DIR + dataset  # Linux resolves no `..` past a missing folder
        elif dataset is None and body.get("benchmark") is not None:
            body["dataset"] = NO_SUCH_DIR + "bench.jsonl"  # both given: refused
    return case


@pytest.fixture(scope="module")
def fuzz_url(server_settings, retriever, tmp_path_factory) -> Iterator[str]:
    """A server of its own, auth off whatever the environment says, so fuzzing leaves the
    session's shared server alone; a home of its own too, so the reports other tests saved are
    not listed (the store is the shared one, through the retriever)."""
    home = tmp_path_factory.mktemp("fuzz") / "home"
    settings_ = server_settings.model_copy(update={"api_key": None, "home": home})
    with run_server(create_app(settings_, retriever)) as url:
        yield url


@pytest.fixture(scope="module")
def api_schema(fuzz_url):
    config = schemathesis.Config.from_dict({"request-timeout": 30})
    return schemathesis.openapi.from_url(f"{fuzz_url}/openapi.json", config=config)


def test_every_documented_operation_is_fuzzed(api_schema):
    documented = {
        f"{op.method.upper()} {op.path}" for op in (r.ok() for r in api_schema.get_all_operations())
    }
    assert documented == set(OPERATIONS)


@pytest.mark.slow
@pytest.mark.parametrize("label", OPERATIONS)
def test_no_5xx_and_responses_match_the_schema(api_schema, fuzz_url, label):
    method, path = label.split(" ", 1)
    operation = api_schema[path][method]
    strategy = st.one_of(
        operation.as_strategy(generation_mode=GenerationMode.POSITIVE),
        operation.as_strategy(generation_mode=GenerationMode.NEGATIVE),
    )
    starts_jobs = label == "POST /v1/eval"
    if starts_jobs:
        strategy = strategy.map(_no_job)

    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,  # nothing written to .hypothesis/ in the work tree
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def run(case: schemathesis.Case) -> None:
        response = case.call_and_validate(base_url=fuzz_url, checks=CHECKS)
        if starts_jobs:
            # refused, no job: too large, invalid, or (a case sent with no body) not JSON
            assert response.status_code in {413, 415, 422}, response.text

    run()
    if starts_jobs:
        assert httpx.get(f"{fuzz_url}/v1/eval").json() == []  # no job was started


# -- invalid Unicode among the generated strings (issue 13.7) -------------------------------------
#: Text with lone surrogates among ordinary characters: JSON carries them as ``\ud800`` escapes,
#: which a schema-driven generator never produces (Hypothesis' text() leaves surrogates out).
HOSTILE_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),
    ),
    max_size=30,
)
SCALARS = st.one_of(HOSTILE_TEXT, st.integers(-5, 200), st.booleans(), st.none(), st.floats())
_KNOWN_FIELDS = st.fixed_dictionaries(
    {"text": HOSTILE_TEXT},
    optional={
        "top_k": st.integers(-1, 120),
        "filters": st.dictionaries(
            HOSTILE_TEXT, st.one_of(SCALARS, st.lists(HOSTILE_TEXT, max_size=3)), max_size=2
        ),
        "collection": st.one_of(st.just("docs"), HOSTILE_TEXT),
        "query_id": HOSTILE_TEXT,
        "mode": st.sampled_from(["dense", "sparse", "hybrid"]),
    },
)
#: A query, now and then with an unknown field too.
QUERY = st.builds(
    lambda known, extra: {**extra, **known},
    _KNOWN_FIELDS,
    st.dictionaries(HOSTILE_TEXT, SCALARS, max_size=1),
)
BATCH = st.fixed_dictionaries(
    {"queries": st.lists(st.one_of(QUERY, SCALARS), max_size=6)},
    optional={"batch_id": HOSTILE_TEXT, "collection": st.one_of(st.just("docs"), HOSTILE_TEXT)},
)


def _contract_error(response: httpx.Response) -> None:
    """A 4xx answers the contract's error Response (or, for a batch, the BatchResponse)."""
    from ragsonde.models import BatchResponse, Response

    assert response.headers["content-type"].startswith("application/json"), response.text
    body = response.json()
    if "responses" in body:
        out = BatchResponse.model_validate(body)
        assert all(r.error is not None for r in out.responses)
    else:
        resp = Response.model_validate(body)
        assert resp.status == "error" and resp.error is not None


@pytest.mark.slow
@pytest.mark.parametrize(("path", "bodies"), [("/v1/query", QUERY), ("/v1/query/batch", BATCH)])
def test_invalid_unicode_never_5xx_and_every_4xx_is_a_contract_body(fuzz_url, path, bodies):
    from ragsonde.models import BatchResponse, Response

    with httpx.Client(base_url=fuzz_url, timeout=60) as client:

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(body=bodies)
        def run(body) -> None:
            raw = json.dumps(body)  # ensure_ascii: lone surrogates travel as \\ud800 escapes
            r = client.post(path, content=raw, headers={"content-type": "application/json"})
            assert r.status_code < 500, r.text
            if r.status_code >= 400:
                _contract_error(r)
                return
            if path.endswith("batch"):
                out = BatchResponse.model_validate(r.json())
                assert len(out.responses) == len(body["queries"])
                for resp in out.responses:
                    assert resp.status == ("error" if resp.error else "success")
            else:
                assert Response.model_validate(r.json()).status == "success"

        run()


#: Bodies of ``POST /v1/eval`` that must be refused, with invalid Unicode: a dataset outside the
#: server's dataset folders (or not there), or rows and a dataset both.
EVAL = st.one_of(
    st.fixed_dictionaries(
        {"dataset": HOSTILE_TEXT},
        optional={"k": st.lists(st.integers(-2, 200), max_size=3), "collection": HOSTILE_TEXT},
    ),
    st.fixed_dictionaries(
        {
            "dataset": HOSTILE_TEXT,
            "benchmark": st.lists(
                st.fixed_dictionaries(
                    {"query": HOSTILE_TEXT, "relevant": st.lists(HOSTILE_TEXT, max_size=2)}
                ),
                min_size=1,
                max_size=3,
            ),
        }
    ),
)


@pytest.mark.slow
def test_eval_routes_with_invalid_unicode_answer_contract_errors(fuzz_url):
    """No job starts, nothing answers 5xx, and every refusal is the contract's error body."""
    with httpx.Client(base_url=fuzz_url, timeout=60) as client:

        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(body=EVAL, job_id=HOSTILE_TEXT)
        def run(body, job_id) -> None:
            raw = json.dumps(body)
            r = client.post("/v1/eval", content=raw, headers={"content-type": "application/json"})
            assert r.status_code == 422, r.text
            _contract_error(r)
            quoted = quote(job_id.encode("utf-8", "surrogatepass"), safe="")
            for method in ("GET", "DELETE"):
                got = client.request(method, f"/v1/eval/x{quoted}")
                assert got.status_code in {404, 422}, got.text
                _contract_error(got)

        run()
    assert httpx.get(f"{fuzz_url}/v1/eval").json() == []
