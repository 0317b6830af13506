"""The CLI's batch-file reader under Hypothesis (issue 13.7): random bytes, JSON with invalid
Unicode. Whatever the file holds, the reader returns a batch body or raises VALIDATION_ERROR
naming the file, and every query it returns validates or is refused as VALIDATION_ERROR."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragsonde.cli.query import _read_batch_file
from ragsonde.errors import QueryValidationError
from ragsonde.models import parse_query

TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"), st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
    ),
    max_size=20,
)
VALUES = st.recursive(
    st.one_of(TEXT, st.integers(), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(TEXT, inner, max_size=3)),
    max_leaves=8,
)
QUERY = st.builds(
    lambda text, extra: {**extra, "text": text}, TEXT, st.dictionaries(TEXT, VALUES, max_size=2)
)


def _jsonl(queries: list) -> bytes:
    return "\n".join(json.dumps(q) for q in queries).encode()


FILES = st.one_of(
    st.binary(max_size=200),
    st.lists(QUERY, max_size=5).map(_jsonl),
    st.lists(st.one_of(QUERY, VALUES), max_size=5).map(lambda v: json.dumps(v).encode()),
    st.tuples(st.lists(QUERY, min_size=1, max_size=4), st.binary(max_size=8)).map(
        lambda t: _jsonl(t[0]) + b"\n" + t[1]  # good lines, then bad bytes
    ),
)


def _outcome(fn, *args):
    """``fn(*args)``, or the QueryValidationError it raised (anything else propagates)."""
    try:
        return fn(*args)
    except QueryValidationError as e:
        return e


@pytest.mark.slow
@settings(max_examples=300, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(content=FILES, suffix=st.sampled_from([".jsonl", ".json"]))
def test_the_batch_file_reader_only_ever_refuses_cleanly(content, suffix):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"queries{suffix}"
        path.write_bytes(content)
        body = _outcome(_read_batch_file, path)
    if isinstance(body, QueryValidationError):
        assert str(path) in body.message
        return
    assert isinstance(body, dict) and "queries" in body
    queries = body["queries"]
    for raw in queries if isinstance(queries, list) else []:
        error = _outcome(parse_query, raw)
        if isinstance(error, QueryValidationError):
            assert error.message.startswith(("Invalid query", "A query must be"))
            error.message.encode("utf-8")  # printable, whatever the input held
