"""``eval`` refuses a benchmark row whose provenance labels or own search settings are
malformed, naming the entry, before any search: an LLM's label with ``"source": "LLM"`` had
counted as a person's (gold, and a gate could pass on it), a person's ``"grade": "2"`` had left
gold without a word, a ``top_k`` of 0 was read as none and a negative one cut the ranking from
its end, and a grade of 1.7 (in a row, or in BEIR qrels) was read as 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.support import Cli

HUMAN = {"id": "lidar", "grade": 2, "source": "human", "judge": "ana"}


@pytest.mark.parametrize(
    ("label", "why"),
    [
        ({**HUMAN, "source": "LLM", "judge": "gemma"}, "not 'LLM'"),
        ({**HUMAN, "grade": "2"}, "grade must be an integer 0 to 3, not '2'"),
    ],
)
@pytest.mark.parametrize("extra", [[], ["--estimate"]])
def test_eval_names_the_malformed_label(
    cli: Cli, tmp_path: Path, label: dict, why: str, extra: list[str]
) -> None:
    row = {"query_id": "q1", "query": "lidar range", "relevant": {"lidar": 2}, "labels": [label]}
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    home = ["--home", str(tmp_path / "home"), "-c", "nowhere", "--no-record"]
    out = cli("eval", str(path), *home, *extra)
    assert out.exit_code == 2, out.output
    message = " ".join(out.stderr.split())
    assert out.stderr.startswith("VALIDATION_ERROR") and "bench.jsonl" in message, message
    assert "entry 1: labels[0]" in message and why in message, message


@pytest.mark.parametrize(
    ("field", "value", "why"),
    [
        ("top_k", 0, "top_k must be a positive integer, not 0"),
        ("top_k", -3, "top_k must be a positive integer, not -3"),
        ("top_k", "ten", "top_k must be a positive integer, not 'ten'"),
        ("top_k", True, "top_k must be a positive integer, not True"),
        ("filters", "url", "filters must be an object"),
    ],
)
def test_eval_names_a_malformed_search_setting(
    cli: Cli, tmp_path: Path, field: str, value: object, why: str
) -> None:
    rows = [
        {"query_id": "q1", "query": "lidar range", "relevant": ["lidar"], "top_k": 5,
         "filters": {"url": "lidar"}},
        {"query_id": "q2", "query": "imu drift", "relevant": ["imu"], field: value},
    ]  # fmt: skip
    path = tmp_path / "bench.yaml"  # YAML rows are read by the same reader
    path.write_text(yaml.safe_dump(rows), encoding="utf-8")
    out = cli("eval", str(path), "--home", str(tmp_path / "home"), "-c", "nowhere", "--no-record")
    assert out.exit_code == 2, out.output
    message = " ".join(out.stderr.split())
    assert out.stderr.startswith("VALIDATION_ERROR") and "bench.yaml" in message, message
    assert "entry 2:" in message and why in message, message


@pytest.mark.parametrize("score", ["1.7", "inf", "nan"])
def test_a_beir_relevance_that_is_not_a_whole_number_is_refused(
    cli: Cli, tmp_path: Path, score: str
) -> None:
    # 1.7 was read as grade 1 without a word, and inf ended the run in a traceback
    ds = tmp_path / "beir"
    (ds / "qrels").mkdir(parents=True)
    (ds / "queries.jsonl").write_text('{"_id": "q1", "text": "lidar range"}\n', encoding="utf-8")
    (ds / "corpus.jsonl").write_text('{"_id": "d1", "text": "Lidar."}\n', encoding="utf-8")
    qrels = ds / "qrels" / "test.tsv"
    qrels.write_text(f"query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t{score}\n", "utf-8")
    out = cli("eval", str(ds), "--home", str(tmp_path / "home"), "-c", "nowhere", "--no-record")
    assert out.exit_code == 2, out.output
    message = " ".join(out.stderr.split())
    assert out.stderr.startswith("VALIDATION_ERROR") and "test.tsv" in message, message
    assert f"line 3: relevance '{score}' is not a whole number" in message, message


@pytest.mark.parametrize("grade", [1.7, True, "2.5"])
def test_a_row_grade_that_is_not_a_whole_number_is_refused(
    cli: Cli, tmp_path: Path, grade: object
) -> None:
    # 1.7 and true were read as grade 1 without a word
    row = {"query_id": "q1", "query": "lidar range", "relevant": {"lidar": 2, "imu": grade}}
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    out = cli("eval", str(path), "--home", str(tmp_path / "home"), "-c", "nowhere", "--no-record")
    assert out.exit_code == 2, out.output
    message = " ".join(out.stderr.split())
    assert "entry 1: relevance grades must be integers" in message, message


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"relevant": [["lidar"], "imu"]}, "relevant[0] is ['lidar'], not an id"),
        ({"relevant": ["lidar", True]}, "relevant[1] is True, not an id"),
        ({"relevant": [1.5]}, "relevant[0] is 1.5, not an id"),
        ({"query": {"text": "imu drift"}}, "query must be text, not dict"),
        ({"query": ["imu drift"]}, "query must be text, not list"),
        ({"query_id": ["q2"]}, "query_id is ['q2'], not an id"),
        (
            {"relevant": None, "references": [{"doc_id": {"d": 1}, "start": 0, "end": 4}]},
            "a reference's doc_id is {'d': 1}, not an id",
        ),
    ],
)
def test_eval_names_a_query_or_an_id_that_is_not_one(
    cli: Cli, tmp_path: Path, fields: dict[str, object], why: str
) -> None:
    # read with str(): ["lidar"] was the relevant id "['lidar']", which matches nothing, and a
    # query ["imu drift"] was searched as the text "['imu drift']", without a word
    row = {"query_id": "q2", "query": "imu drift", "relevant": ["imu"], **fields}
    row = {k: v for k, v in row.items() if v is not None}
    path = tmp_path / "bench.jsonl"
    lines = [{"query_id": "q1", "query": "lidar range", "relevant": ["lidar"]}, row]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    out = cli("eval", str(path), "--home", str(tmp_path / "home"), "-c", "nowhere", "--no-record")
    assert out.exit_code == 2, out.output
    message = " ".join(out.stderr.split())
    assert out.stderr.startswith("VALIDATION_ERROR") and "bench.jsonl" in message, message
    assert "entry 2:" in message and why in message, message
