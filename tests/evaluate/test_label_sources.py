"""The one reader of a row's label provenance: who labelled it decides gold, machine and pool."""

from __future__ import annotations

import json

import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.datasets import load_benchmark
from ragsonde.evaluate.label_sources import grades, judged, machine_source, provenance
from ragsonde.evaluate.provenance import gold_only, judge_labels

HUMAN = {"id": "d1", "grade": 2, "source": "human"}
LLM = {"id": "d2", "grade": 1, "source": "llm", "judge": "local:gemma3-270m"}
GEN = {"id": "d3", "grade": 1, "source": "generator"}


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ({"labels": [HUMAN, LLM]}, None),  # a person labelled it: gold
        ({"labels": [LLM]}, "llm:local:gemma3-270m"),
        ({"labels": [GEN, LLM]}, "generator:?"),
        ({"generator": "offline:ict"}, "generator:offline:ict"),
        ({}, None),  # a plain benchmark row (BEIR-like): a person's
        ({"labels": "not a list"}, None),
    ],
)
def test_machine_source_names_rows_no_person_labelled(row, expected):
    assert machine_source(row) == expected


def test_provenance_and_grades_skip_malformed_labels():
    row = {"labels": [HUMAN, "x", {"id": "d1", "grade": True}, {"id": "d1", "grade": 1}, LLM]}
    assert provenance(row) == [HUMAN, {"id": "d1", "grade": True}, {"id": "d1", "grade": 1}, LLM]
    assert grades(provenance(row)) == {"d1": 2, "d2": 1}


def test_judged_means_hits_were_looked_at():
    assert judged({"labels": [GEN, LLM]})
    assert judged({"relevant": {"a": 0, "b": 1}})  # a zero grade: someone looked and said no
    assert not judged({"labels": [GEN], "relevant": {"d3": 1}})


def test_the_loader_and_the_estimate_read_the_same_rows_alike(tmp_path):
    rows = [
        {"query_id": "q1", "query": "a person's", "relevant": {"d1": 2, "d2": 1}, "labels": [HUMAN, LLM]},
        {"query_id": "q2", "query": "the model's", "relevant": {"d2": 1}, "labels": [LLM]},
        {"query_id": "q3", "query": "generated", "relevant": {"d3": 1}, "generator": "offline:ict"},
    ]  # fmt: skip
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    bench = load_benchmark(path, keep_unlabelled=True)
    by_id = {q.query_id: q for q in bench.queries}
    assert by_id["q1"].relevant == {"d1": 2}  # the LLM's grade is not gold
    assert by_id["q2"].relevant == {}  # labelled by the LLM only: unlabelled here
    assert by_id["q2"].machine_labels == "llm:local:gemma3-270m"
    assert by_id["q3"].machine_labels == "generator:offline:ict"
    assert by_id["q1"].machine_labels is None
    assert bench.pooled
    assert judge_labels(path).grades == {"q1": {"d2": 1}, "q2": {"d2": 1}}
    plain = load_benchmark(path)
    assert gold_only(plain, rows).queries[0].relevant == {"d1": 2}


@pytest.mark.parametrize(
    ("label", "why"),
    [
        ({**HUMAN, "grade": "2"}, "grade must be an integer 0 to 3, not '2'"),  # gold lost it
        ({**LLM, "source": "LLM"}, "source must be one of generator, human, llm, not 'LLM'"),
        ({**HUMAN, "grade": 7}, "grade must be an integer 0 to 3, not 7"),
        ({**HUMAN, "grade": True}, "grade must be an integer 0 to 3, not True"),
        ({"grade": 2, "source": "human"}, "id must be a non-empty string, not None"),
        ("d1", "labels[1] is not an object"),
    ],
)
def test_a_malformed_label_is_refused_where_the_file_is_read(tmp_path, label, why):
    rows = [
        {"query_id": "q0", "query": "sound", "relevant": {"d1": 2}, "labels": [HUMAN]},
        {"query_id": "q1", "query": "a person's", "relevant": {"d1": 2, "d2": 1},
         "labels": [LLM, label]},
    ]  # fmt: skip
    path = tmp_path / "bench.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for keep in (False, True):
        with pytest.raises(QueryValidationError) as caught:
            load_benchmark(path, keep_unlabelled=keep)
        assert "entry 2: labels[1]" in caught.value.message and why in caught.value.message
