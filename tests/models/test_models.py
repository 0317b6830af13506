from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from ragsonde.errors import ErrorCode, QueryValidationError
from ragsonde.models import (
    BatchRequest,
    Limits,
    Query,
    Response,
    Result,
    json_schemas,
    parse_query,
)


def test_defaults_follow_the_contract():
    q = parse_query({"query_text": "  what is lidar?  "})
    assert q.query_text == "what is lidar?"
    assert (q.top_k, q.score_threshold, q.filters) == (5, 0.0, None)
    assert (q.include_metadata, q.include_vectors, q.mode, q.collection) == (
        True,
        False,
        "dense",
        None,
    )
    assert len(q.query_id) == 36  # a generated UUID4


@pytest.mark.parametrize("alias", ["query_text", "text", "query"])
def test_text_aliases(alias):
    assert parse_query({alias: "hello"}).query_text == "hello"


@pytest.mark.parametrize("alias", ["score_threshold", "threshold", "similarity_threshold"])
def test_threshold_aliases(alias):
    assert parse_query({"text": "x", alias: 0.25}).score_threshold == 0.25


@pytest.mark.parametrize(
    ("body", "field", "rule"),
    [
        ({"text": ""}, "text", "must not be empty"),
        ({"text": "   \n "}, "text", "must not be empty"),
        ({"text": "x" * 2001}, "text", "at most 2000 characters"),
        ({"text": "x", "top_k": 0}, "top_k", "between 1 and 100"),
        ({"text": "x", "top_k": 101}, "top_k", "between 1 and 100"),
        ({"text": "x", "top_k": "5"}, "top_k", "valid integer"),
        ({"text": "x", "threshold": 1.5}, "threshold", "between 0.0 and 1.0"),
        ({"text": "x", "threshold": -0.1}, "threshold", "between 0.0 and 1.0"),
        ({"text": "x", "mode": "fuzzy"}, "mode", "dense"),
        ({"text": "x", "filters": {"url": []}}, "filters", "empty list"),
        ({"text": "x", "filters": {"url": {"nested": 1}}}, "filters", ""),
        ({"text": "x", "colour": "red"}, "colour", "not a known field"),
        ({}, "query_text", "Field required"),
    ],
)
def test_validation_names_field_and_rule(body, field, rule):
    with pytest.raises(QueryValidationError) as info:
        parse_query(body)
    err = info.value
    assert err.code is ErrorCode.VALIDATION_ERROR
    assert field in err.message
    assert rule in err.message


def test_a_deployment_may_lower_limits():
    limits = Limits(max_query_chars=10, max_top_k=20, max_batch_size=2)
    with pytest.raises(QueryValidationError, match="between 1 and 20"):
        parse_query({"text": "x", "top_k": 21}, limits)
    with pytest.raises(QueryValidationError, match="at most 10 characters"):
        parse_query({"text": "x" * 11}, limits)
    assert parse_query({"text": "x", "top_k": 20}, limits).top_k == 20
    with pytest.raises(ValidationError, match="at most 2 queries"):
        BatchRequest.model_validate({"queries": [{"text": "a"}] * 3}, context={"limits": limits})


def test_minimal_result_serialises_only_four_fields():
    r = Result(chunk_id="1", text="t", url="u", similarity_score=0.5, rank=0, raw_score=0.5)
    assert set(r.model_dump()) == {
        "chunk_id",
        "text",
        "url",
        "title",
        "section",
        "chunk_index",
        "similarity_score",
        "raw_score",
        "rank",
        "created_at",
        "metadata",
    }
    assert set(r.minimal().model_dump()) == {"chunk_id", "text", "similarity_score", "rank"}
    with_vec = Result(chunk_id="1", text="t", similarity_score=0.5, rank=0, vector=[0.1])
    assert with_vec.minimal().model_dump()["vector"] == [0.1]


def test_failure_response_shape():
    resp = Response.failure(
        QueryValidationError("bad"), query="q", query_id="id", top_k=5, collection="c", model="m"
    )
    data = json.loads(resp.model_dump_json())
    assert data["status"] == "error"
    assert data["results"] == [] and data["total_results"] == 0
    assert data["error"] == {"code": "VALIDATION_ERROR", "message": "bad"}


def test_json_schema_export_covers_every_model():
    schemas = json_schemas()
    assert set(schemas) == {
        "Query",
        "BatchRequest",
        "Result",
        "Response",
        "BatchResponse",
        "ErrorInfo",
    }
    q = schemas["Query"]
    assert "query_text" in q["properties"] and q["required"] == ["query_text"]
    assert q["properties"]["top_k"]["default"] == 5
    codes = schemas["ErrorInfo"]["$defs"]["ErrorCode"]["enum"]
    assert set(codes) == {c.value for c in ErrorCode}
    json.dumps(schemas)  # serialisable as-is


def test_query_is_immutable():
    q = Query(query_text="x")
    with pytest.raises(ValidationError):
        q.top_k = 3  # type: ignore[misc]
