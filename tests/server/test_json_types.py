"""A JSON value of the wrong type is refused on every body, never coerced into a different answer.

Found by attacking a real server as a careless client would: pydantic's lax mode read
``"score_threshold": true`` in a ``search`` block (``/v1/query``, ``/v1/eval``) as a threshold of
1.0, so the answer had no results and a 200; ``"exact": "yes"`` as ``True``; ``"top_k": "3"`` as 3;
``/v1/traffic``'s ``"weak_below": true`` as 1.0 (every query weak); a judge ``"grade": true`` as a
grade of 1 written to the benchmark. The top-level query fields were already strict, the nested
``search`` block and the other bodies were not. Each is now a 422 VALIDATION_ERROR naming the
field, the same values of the right type are answered as before, and no eval job starts.
"""

from __future__ import annotations

import httpx
import pytest

from tests.support import LIDAR, error_of

pytestmark = pytest.mark.slow  # the real model behind a real server

#: (field path in the search block, a value of the wrong JSON type)
WRONG_SEARCH = [
    ("score_threshold", True),
    ("exact", "yes"),
    ("exact", 1),
    ("top_k", "3"),
    ("hnsw_ef", True),
    ("aggregation_n", True),
]
BENCH = [{"query_id": "q1", "query": LIDAR, "relevant": ["lidar"]}]


def _refused(r: httpx.Response, field: str) -> None:
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "VALIDATION_ERROR" and field in error["message"], error


@pytest.mark.parametrize(("field", "value"), WRONG_SEARCH)
def test_a_search_block_of_the_wrong_json_type_is_refused(api, field, value):
    r = api.post("/v1/query", json={"text": LIDAR, "search": {field: value}})
    resp = error_of(r, 422, "VALIDATION_ERROR")
    assert f"search.{field}" in resp.error.message
    batch = api.post(
        "/v1/query/batch", json={"queries": [{"text": LIDAR, "search": {field: value}}]}
    )
    assert batch.status_code == 422, batch.text
    assert f"search.{field}" in batch.json()["responses"][0]["error"]["message"]
    assert api.get("/healthz").status_code == 200


def test_the_right_json_types_still_answer(api):
    # 3.0 is an integer to JSON Schema (and to the published schema): strict validation took
    # it for a float and refused it (schemathesis: "grade": 3.0)
    good = {"score_threshold": 0, "exact": True, "top_k": 3.0, "fusion": "rrf"}
    r = api.post("/v1/query", json={"text": LIDAR, "search": {**good, "fusion_weights": [1, 0.5]}})
    assert r.status_code == 200, r.text
    assert len(r.json()["results"]) == 3 and r.json()["search"]["fusion_weights"] == [1.0, 0.5]
    top = api.post("/v1/query", json={"text": LIDAR, "top_k": 2.0, "score_threshold": 1e-9})
    assert top.status_code == 200 and len(top.json()["results"]) == 2, top.text
    grade = {"query": LIDAR, "chunk_id": "c1", "doc_id": "lidar", "grade": 3.0}
    saved = api.post("/v1/judge/benchmarks/typed-int/grades", json=grade)
    assert saved.status_code == 200, saved.text


def test_fusion_weights_beyond_the_bound_are_a_422(api):
    """``[1e308, 1e308]`` was answered (a linear fusion overflows to inf); the same rule as the
    library's, checked where the search block enters."""
    search = {"fusion": "linear", "fusion_weights": [1e308, 1e308]}
    resp = error_of(
        api.post("/v1/query", json={"text": LIDAR, "search": search}), 422, "VALIDATION_ERROR"
    )
    assert "search.fusion_weights" in resp.error.message and "1e6" in resp.error.message
    search["fusion_weights"] = [1e6, 0.0]  # at the bound: answered
    assert api.post("/v1/query", json={"text": LIDAR, "search": search}).status_code == 200


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"score_threshold": True}, "search.score_threshold"),
        ({"search": {"score_threshold": True}}, "search.score_threshold"),
        ({"top_k": "5"}, "search.top_k"),
        ({"throughput": "yes"}, "throughput"),
        ({"k": [True, 5]}, "k.0"),
        ({"max_recall_loss": True}, "max_recall_loss"),
    ],
)
def test_eval_options_of_the_wrong_json_type_start_no_job(api, extra, field):
    before = api.get("/v1/eval").json()
    _refused(api.post("/v1/eval", json={"benchmark": BENCH, "throughput": False, **extra}), field)
    assert api.get("/v1/eval").json() == before


def test_traffic_and_judge_bodies_take_json_types_as_they_are(api):
    rows = [{"query": LIDAR}]
    _refused(api.post("/v1/traffic", json={"records": rows, "weak_below": True}), "weak_below")
    grade = {"query": LIDAR, "chunk_id": "c1", "doc_id": "lidar", "grade": True}
    _refused(api.post("/v1/judge/benchmarks/typed/grades", json=grade), "grade")
    assert api.get("/v1/judge/benchmarks/typed").json()["queries"] == []  # nothing was written
    depth = api.post("/v1/judge/pool", json={"query": LIDAR, "depth": "5"})
    _refused(depth, "depth")
    assert api.get("/healthz").status_code == 200
