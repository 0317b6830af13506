"""Hostile files at the CLI (issue 33), as real processes: text that is not Unicode (a lone
surrogate escaped in JSON or YAML) is refused where the file is read, naming the line and the
field; where a command works row by row (ingest) the good rows go on. Native code (trec_eval)
never sees such text: a benchmark whose ``query_id`` is ``"\\udc80"`` exited 139 before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.store import open_store
from tests.support import DOCS, fill, home_env, run

pytestmark = pytest.mark.slow  # processes and the model

#: A lone surrogate as JSON carries it: the escape, so the file itself is valid UTF-8 JSON.
BAD = "\\udc80"


@pytest.fixture(scope="module")
def home(tmp_path_factory, embedder) -> Path:
    path = tmp_path_factory.mktemp("hostile-files")
    store = open_store(Settings(home=path))
    fill(store, embedder, "rag_embedding")
    store.close()
    return path


def _refused(r, *needles: str) -> str:
    text = r.stdout + r.stderr
    assert r.returncode == 2, (r.returncode, text)
    assert "VALIDATION_ERROR" in text and "Traceback" not in text, text
    message = " ".join(text.split())
    for needle in needles:
        assert needle in message, (needle, message)
    return message


@pytest.mark.parametrize(
    ("row", "field"),
    [
        (f'{{"query_id": "{BAD}", "query": "laser range", "relevant": ["lidar"]}}', "query_id"),
        (f'{{"query_id": "q", "query": "laser {BAD} range", "relevant": ["lidar"]}}', "query"),
        (f'{{"query_id": "q", "query": "laser range", "relevant": ["{BAD}"]}}', "relevant[0]"),
        (f'{{"query_id": "q", "query": "laser", "relevant": {{"{BAD}": 1}}}}', "relevant"),
    ],
    ids=["query_id", "query", "relevant-list", "relevant-key"],
)
def test_a_benchmark_row_that_is_not_unicode_is_refused_naming_line_and_field(
    home: Path, tmp_path: Path, row: str, field: str
):
    bench = tmp_path / "bench.jsonl"
    good = '{"query_id": "ok", "query": "how far does the laser reach", "relevant": ["lidar"]}'
    bench.write_text(f"{good}\n{row}\n", encoding="utf-8")
    save = tmp_path / "report.json"
    r = run("eval", str(bench), "--save", str(save), "--no-record", env=home_env(home))
    _refused(r, "line 2", field, "lone surrogate")
    assert not save.exists()


def test_a_yaml_benchmark_that_is_not_unicode_is_refused(home: Path, tmp_path: Path):
    bench = tmp_path / "bench.yaml"
    bench.write_text(
        f'- query_id: "{BAD}"\n  query: laser range\n  relevant: [lidar]\n', encoding="utf-8"
    )
    _refused(run("eval", str(bench), "--no-record", env=home_env(home)), "query_id")


def test_ingest_keeps_the_good_rows_of_a_file_with_bad_ones(home: Path, tmp_path: Path):
    docs = tmp_path / "docs.jsonl"
    rows = [
        json.dumps({"id": "a", "text": DOCS[0][2]}),
        f'{{"id": "{BAD}", "text": "a document with a bad id"}}',
        f'{{"id": "c", "text": "a document with {BAD} in its text"}}',
        f'{{"id": "d", "text": "fine", "tags": {{"{BAD}": 1}}}}',
        json.dumps({"id": "e", "text": DOCS[1][2]}),
    ]
    docs.write_text("\n".join(rows) + "\n", encoding="utf-8")
    r = run("ingest", str(docs), "-c", "mixed", "--json", env=home_env(home))
    assert "Traceback" not in r.stderr, r.stderr
    out = json.loads(r.stdout)
    assert out["documents"] == 2, out
    failures = " ".join(json.dumps(f) for f in out["failed"])
    for line, field in ((2, "field id"), (3, "field text"), (4, "key of field tags")):
        assert f"docs.jsonl:{line}" in failures and field in failures, failures


def test_a_csv_field_over_the_csv_limit_is_one_clear_error(home: Path, tmp_path: Path):
    questions = tmp_path / "questions.csv"
    refs = json.dumps([{"content": "x", "start_index": 0, "end_index": 1}])
    big = "why " * 40_000  # 160,000 characters: over csv's 131,072
    questions.write_text(
        f'question,references,corpus_id\nshort,"{refs.replace(chr(34), 2 * chr(34))}",doc\n'
        f'"{big}","{refs.replace(chr(34), 2 * chr(34))}",doc\n',
        encoding="utf-8",
    )
    _refused(run("eval", str(questions), "--no-record", env=home_env(home)), "line 3", "CSV")
