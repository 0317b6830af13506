"""``ragsonde.testing.beir_slice``: a small real benchmark cut from SciFact, that loads."""

from __future__ import annotations

import json
from pathlib import Path

from ragsonde.evaluate.datasets import load_benchmark
from ragsonde.testing import beir_slice


def test_slice_keeps_judged_documents_grades_and_distractors(
    scifact_dir: Path, tmp_path: Path
) -> None:
    out = beir_slice(scifact_dir, tmp_path / "s", 7, 30)
    bench = load_benchmark(str(out), split="test")
    assert len(bench.queries) == 7 and not bench.skipped
    ids = [json.loads(x)["_id"] for x in (out / "corpus.jsonl").read_text().splitlines()]
    judged = {d for q in bench.queries for d in q.relevant}
    assert judged <= set(ids) and len(ids) == len(judged) + 30 == len(set(ids))
    full = load_benchmark(str(scifact_dir), split="test")
    first = {q.query_id: q.relevant for q in full.queries[:7]}
    assert {q.query_id: q.relevant for q in bench.queries} == first


def test_slice_keeps_a_grade_other_than_one(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "qrels").mkdir(parents=True)
    rows = [{"_id": f"d{i}", "title": "", "text": f"text {i}"} for i in range(5)]
    (src / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (src / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": "text"}) + "\n")
    (src / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td3\t2\n")
    bench = load_benchmark(str(beir_slice(src, tmp_path / "out", 1, 2)), split="test")
    assert bench.queries[0].relevant == {"d3": 2}
    corpus = (tmp_path / "out" / "corpus.jsonl").read_text().splitlines()
    assert [json.loads(x)["_id"] for x in corpus] == ["d3", "d0", "d1"]
