"""Grades given in the page: a query with no text is a validation error, never a 500."""

from __future__ import annotations

import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.labels.manual import record_grade


@pytest.mark.parametrize("query", ["", "   ", "\x1d", "\t\n"])
def test_a_query_without_text_is_refused_and_nothing_is_written(tmp_path, query):
    path = tmp_path / "bench.jsonl"
    with pytest.raises(QueryValidationError) as e:
        record_grade(path, query, doc_id="lidar", chunk_id="c1", grade=2, judge="me")
    assert e.value.field == "query"
    assert not path.exists()


def test_a_grade_out_of_range_is_refused(tmp_path):
    with pytest.raises(QueryValidationError) as e:
        record_grade(tmp_path / "b.jsonl", "lidar", doc_id="d", chunk_id="c", grade=7, judge="me")
    assert e.value.field == "grade"
