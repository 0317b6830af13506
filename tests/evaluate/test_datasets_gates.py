"""Benchmark loaders and gates."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate import EvalReport, load_benchmark, parse_gate
from ragsonde.evaluate.gates import Gate


def test_beir_scifact_test_split(scifact_dir):
    bench = load_benchmark(scifact_dir)
    assert len(bench.queries) == 300  # only queries with qrels
    assert sum(len(q.relevant) for q in bench.queries) == 339
    assert all(q.text and "\r" not in q.query_id for q in bench.queries)
    assert bench.corpus == scifact_dir / "corpus.jsonl"
    with pytest.raises(QueryValidationError, match="splits here: test"):
        load_benchmark(scifact_dir, split="dev")


def test_trec_qrels_with_queries_tsv(tmp_path):
    (tmp_path / "q.tsv").write_text("1\tfirst question\n2\tsecond question\n")
    (tmp_path / "qrels.txt").write_text("1 0 docA 2\n1 0 docB 0\n2 0 docC 1\n3 0 docD 1\n")
    bench = load_benchmark(tmp_path / "qrels.txt", queries=tmp_path / "q.tsv")
    assert {q.query_id: q.relevant for q in bench.queries} == {"1": {"docA": 2}, "2": {"docC": 1}}
    assert bench.skipped == ["3: no text in q.tsv"]
    with pytest.raises(QueryValidationError, match="queries_file"):  # a field, not a flag
        load_benchmark(tmp_path / "qrels.txt")


def test_own_jsonl_and_yaml(tmp_path):
    (tmp_path / "b.jsonl").write_text(
        '{"query_id": "a", "query": "lidar?", "relevant": ["lidar"], "filters": {"category": "sensors"}}\n'
        '{"query": "imu?", "relevant": {"imu": 2}, "top_k": 3}\n'
    )
    bench = load_benchmark(tmp_path / "b.jsonl")
    a, b = bench.queries
    assert (a.query_id, a.relevant, a.filters) == ("a", {"lidar": 1}, {"category": "sensors"})
    assert (b.query_id, b.relevant, b.top_k) == ("2", {"imu": 2}, 3)
    (tmp_path / "b.yaml").write_text("queries:\n  - query: gps?\n    relevant: [gps]\n")
    assert load_benchmark(tmp_path / "b.yaml").queries[0].relevant == {"gps": 1}
    # a row without relevance is unlabelled (traffic): a benchmark of only those is refused
    (tmp_path / "bad.jsonl").write_text('{"query": "no relevant"}\n')
    with pytest.raises(QueryValidationError, match="none of its 1 queries is labelled"):
        load_benchmark(tmp_path / "bad.jsonl")
    (tmp_path / "bad2.jsonl").write_text('{"relevant": ["x"]}\n')
    with pytest.raises(QueryValidationError, match='needs "query" and "relevant"'):
        load_benchmark(tmp_path / "bad2.jsonl")


def test_gates_parse_and_evaluate():
    report = EvalReport.model_validate(
        {
            "dataset": "d",
            "collection": "c",
            "embedder": "e",
            "relevance_by": "doc",
            "ks": [10],
            "search": {},
            "metrics": {"ndcg@10": 0.64},
            "latency": {"total_ms": {"p95": 30.0}},
            "integrity": {},
            "benchmark": {"name": "d", "queries": 0},
            "created_at": "2026-11-23T00:00:00+00:00",
            "per_query": {},
        }
    )
    assert parse_gate("ndcg@10>=0.60").evaluate(report).passed is True
    assert parse_gate("ndcg@10 > 0.7").evaluate(report).model_dump() == {
        "gate": "ndcg@10>0.7",
        "value": 0.64,
        "passed": False,
    }
    assert parse_gate("latency.total_ms.p95<=50").evaluate(report).passed is True
    with pytest.raises(QueryValidationError, match="names nothing"):
        parse_gate("latency.nope.p95<=1").evaluate(report)
    with pytest.raises(QueryValidationError, match="METRIC OP NUMBER"):
        parse_gate("ndcg@10 is good")


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("bin.jsonl", b'{"query": "a", "relevant": ["x"]}\n\x00\x01\xff', "line 2 holds binary"),
        ("latin.jsonl", '{"query": "a", "relevant": ["x"]}\n{"query": "\xe9"}\n'.encode("latin-1"),
         "line 2 is not UTF-8"),
        ("broken.jsonl", b'{"query": "a", "relevant": ["x"]}\n{oops\n', "line 2 is not JSON"),
        ("broken.yaml", b"- query: a\n  relevant: [x\n", "line 3: not valid YAML"),
        ("grades.jsonl", b'{"query": "a", "relevant": {"x": "high"}}\n', "must be integers"),
        ("short.qrels", b"1 0 d1 1\n1 0 d2\n", "line 2 is not 'qid 0 docid relevance'"),
        # beyond trec_eval's C int: a SystemError in the eval, "a bug" from the server
        ("huge.jsonl", b'{"query": "a", "relevant": {"x": 1e308}}\n', "from -2,147,483,647"),
        ("huger.jsonl", b'{"query": "a", "relevant": {"x": -10000000000}}\n', "integers from"),
        ("huge.qrels", b"1 0 d1 99999999999\n", "beyond"),
    ],
)  # fmt: skip
def test_a_bad_benchmark_file_names_the_file_and_the_line(tmp_path, name, data, says):
    path = tmp_path / name
    path.write_bytes(data)
    (tmp_path / "q.tsv").write_text("1\tfirst question\n")
    with pytest.raises(QueryValidationError) as info:
        load_benchmark(path, queries=tmp_path / "q.tsv")
    assert str(path) in info.value.message and says in info.value.message
    assert info.value.field == "dataset"


def test_a_folder_where_a_file_belongs_is_a_validation_error(tmp_path):
    (tmp_path / "bench.jsonl").mkdir()
    with pytest.raises(QueryValidationError, match=r"bench\.jsonl: a folder must be a BEIR"):
        load_benchmark(tmp_path / "bench.jsonl")
    beir = tmp_path / "beir"
    (beir / "qrels" / "test.tsv").mkdir(parents=True)
    (beir / "queries.jsonl").write_text('{"_id": "1", "text": "q"}\n')
    with pytest.raises(QueryValidationError, match=r"test\.tsv: it is a folder, not a file"):
        load_benchmark(beir)


@settings(max_examples=300, deadline=None)
@given(
    threshold=st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False),
    op=st.sampled_from([">=", "<=", ">", "<", "=="]),
)
def test_a_gate_reads_back_as_it_was_written(threshold: float, op: str) -> None:
    """``str(gate)`` is what ``parse_gate`` takes back, for any threshold (``1e+06`` was not)."""
    gate = Gate("ndcg@10", op, threshold)
    assert parse_gate(str(gate)) == gate
