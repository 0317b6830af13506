"""JSON nested deeper than Python's parser goes is refused as input, never a traceback.

``json.loads`` raises RecursionError (not ValueError) past its depth: one such line in a
benchmark, a JSON Lines corpus or a BEIR corpus was a traceback in every command that reads one
(eval, explain, judge, tune, ingest), and a payload string holding one broke a retrieval.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsonde.ingest.document import Document, Failure
from ragsonde.ingest.sources.jsonl import JsonlSource
from ragsonde.labels.benchfile import read_entries
from ragsonde.models.payload import DEFAULT_MAPPING
from ragsonde.models.text import loads_json

DEEP = "[" * 100_000 + "]" * 100_000


def test_loads_json_refuses_it_as_a_value_error() -> None:
    with pytest.raises(RecursionError):
        json.loads(DEEP)  # what the readers got
    with pytest.raises(ValueError, match="nests JSON too deeply"):
        loads_json(DEEP)


def test_a_benchmark_line_is_refused_naming_its_line(tmp_path: Path) -> None:
    bench = tmp_path / "b.jsonl"
    good = {"query_id": "q1", "query": "lidar", "relevant": ["a"]}
    bench.write_text(
        json.dumps(good) + '\n{"query_id": "q2", "query": "x", "meta": ' + DEEP + "}\n",
        encoding="utf-8",
    )
    with pytest.raises(Exception, match="line 2: it nests JSON too deeply") as err:
        read_entries(bench)
    assert not isinstance(err.value, RecursionError)


def test_a_corpus_line_fails_alone(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(
        '{"id": "a", "text": "Lidar measures range."}\n{"id": "b", "text": "x", "m": '
        + DEEP
        + "}\n",
        encoding="utf-8",
    )
    read = list(JsonlSource(corpus))
    assert [d.doc_id for d in read if isinstance(d, Document)] == ["a"]
    failed = [f for f in read if isinstance(f, Failure)]
    assert len(failed) == 1 and "nests JSON too deeply" in failed[0].reason


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ({"id": ["l"], "text": "t"}, '"id" must be a non-empty string'),
        ({"id": True, "text": "t"}, '"id" must be a non-empty string'),
        ({"id": 1.5, "text": "t"}, '"id" must be a non-empty string'),
        ({"id": "", "text": "t"}, '"id" must be a non-empty string'),
        ({"id": "a", "text": ["not", "str"]}, '"text" must be a string, not list'),
        ({"id": "a", "text": "t", "title": {"a": 1}}, '"title" must be a string, not dict'),
        ({"id": "a", "text": "t", "url": 7}, '"url" must be a string, not int'),
    ],
)
def test_a_corpus_row_of_the_wrong_types_fails_naming_the_field(
    tmp_path: Path, row: dict[str, object], said: str
) -> None:
    """``str()`` stored a list id as ``"['l']"``, ``true`` as ``"True"`` and embedded a list
    of words as prose; each such row now fails alone, the others go in."""
    corpus = tmp_path / "c.jsonl"
    good = {"id": 7, "text": "Lidar measures range.", "title": "Lidar"}
    corpus.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    read = list(JsonlSource(corpus))
    assert isinstance(read[0], Document) and read[0].doc_id == "7"  # an integer id is kept
    assert isinstance(read[1], Failure) and said in read[1].reason


def test_a_payload_string_holding_it_is_not_json() -> None:
    fields = DEFAULT_MAPPING.read({"_node_content": "{" + '"a":' * 50_000 + "1" + "}" * 50_000})
    assert fields.text == ""
