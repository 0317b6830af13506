"""Span metrics against hand-computed cases, and span-labelled benchmarks (ragsonde's rows and
Chroma's questions CSV, read from the shared data)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.datasets import load_benchmark
from ragsonde.evaluate.spans import (
    Span,
    omega_chunks,
    precision_omega,
    span_metric_names,
    span_of,
    span_scores,
)
from ragsonde.models.payload import LAYOUTS
from tests.support import CHUNKING


def a(start: int, end: int, doc: str = "a") -> Span:
    return Span(doc, start, end)


def test_overlapping_chunks_count_twice_in_precision_and_iou():
    # R = [10, 20); chunks [0, 15) and [12, 30) overlap on [12, 15)
    s = span_scores([a(10, 20)], [a(0, 15), a(12, 30)])
    assert s.recall == 1.0
    assert s.precision == pytest.approx(10 / 33)  # 15 + 18 characters retrieved
    assert s.iou == pytest.approx(10 / 33)  # nothing of R left out


def test_an_answer_split_across_two_chunks():
    both = span_scores([a(40, 60)], [a(30, 50), a(50, 70)])
    assert (both.recall, both.precision, both.iou) == (1.0, 0.5, 0.5)
    first = span_scores([a(40, 60)], [a(30, 50)])
    assert first.recall == 0.5
    assert first.precision == 0.5  # 10 of the 20 characters retrieved
    assert first.iou == pytest.approx(10 / (20 + 10))  # R's other half counts in the union


def test_references_in_two_documents_and_a_chunk_of_a_third():
    s = span_scores([a(0, 10), a(0, 10, "b")], [a(5, 15), a(0, 100, "c")])
    assert s.recall == pytest.approx(5 / 20)
    assert s.precision == pytest.approx(5 / 110)
    assert s.iou == pytest.approx(5 / (110 + 15))


def test_overlapping_references_are_one_union():
    s = span_scores([a(0, 10), a(5, 15)], [a(0, 15)])
    assert (s.recall, s.precision, s.iou) == (1.0, 1.0, 1.0)
    half = span_scores([a(0, 10), a(5, 15)], [a(0, 5)])
    assert half.recall == pytest.approx(5 / 15)


def test_nothing_retrieved_scores_zero():
    s = span_scores([a(0, 10)], [])
    assert (s.recall, s.precision, s.iou) == (0.0, 0.0, 0.0)


def test_precision_omega_takes_every_chunk_that_holds_some_of_the_answer():
    chunking = [a(0, 10), a(8, 20), a(20, 30), a(0, 50, "b")]
    assert omega_chunks([a(9, 12)], chunking) == [a(0, 10), a(8, 20)]
    assert precision_omega([a(9, 12)], chunking) == pytest.approx(3 / 22)
    assert precision_omega([a(20, 30)], chunking) == 1.0
    assert precision_omega([a(60, 70)], chunking) == 0.0  # no chunk holds it


def test_bad_spans_and_empty_references_are_validation_errors():
    with pytest.raises(QueryValidationError):
        Span("a", 5, 4)
    with pytest.raises(QueryValidationError):
        span_scores([], [a(0, 1)])
    with pytest.raises(QueryValidationError):
        span_scores([a(3, 3)], [a(0, 1)])


def test_metric_names():
    assert span_metric_names([5]) == [
        "span_recall@5",
        "span_precision@5",
        "span_iou@5",
        "span_precision_omega",
    ]


def test_span_of_reads_each_layout():
    assert span_of("d", {"text": "abc", "start": 3, "end": 6}) == Span("d", 3, 6)
    # LangChain's add_start_index: only the start; the end is the text's length later
    lc = {"page_content": "hello", "metadata": {"start_index": 10}}
    assert span_of("d", lc, LAYOUTS["langchain"].mapping) == Span("d", 10, 15)
    assert span_of("d", {"metadata": {"start_index": 10}}, text="hey") == Span("d", 10, 13)
    llama = {"_node_content": json.dumps({"text": "x", "start_char_idx": 2, "end_char_idx": 9})}
    assert span_of("d", llama, LAYOUTS["llamaindex"].mapping) == Span("d", 2, 9)
    assert span_of("d", {"text": "abc"}) is None  # a foreign collection: no span
    assert span_of(None, {"start": 1, "end": 2}) is None
    assert span_of("d", {"start": True, "end": 2}) is None


def test_references_rows_load_and_default_relevant_to_their_documents(tmp_path: Path):
    path = tmp_path / "bench.jsonl"
    rows = [
        {"query": "q1", "references": [{"doc_id": "x", "start": 0, "end": 4}]},
        {"query": "q2", "relevant": ["y"], "references": [{"doc_id": "x", "start": 2, "end": 9}]},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    bench = load_benchmark(path)
    assert bench.span_labelled
    assert bench.queries[0].relevant == {"x": 1}
    assert bench.queries[1].relevant == {"y": 1}
    assert bench.queries[1].references == (Span("x", 2, 9),)


@pytest.mark.parametrize(
    ("refs", "why"),
    [
        ([], "non-empty list"),
        ([{"doc_id": "x", "start": 1}], "integer start and end"),
        ([{"doc_id": "x", "start": 5, "end": 1}], "start <= end"),
        (["x"], "an object"),
    ],
)
def test_bad_references_name_the_entry(tmp_path: Path, refs, why):
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps({"query": "q", "references": refs}), encoding="utf-8")
    with pytest.raises(QueryValidationError, match=f"entry 1.*{why}"):
        load_benchmark(path)


def test_chroma_questions_csv_loads_with_offsets_into_the_corpus_files():
    if not (CHUNKING / "questions.csv").is_file():
        pytest.skip(f"chunking data not found at {CHUNKING}")
    bench = load_benchmark(CHUNKING / "questions.csv")
    assert len(bench.queries) == 319 and bench.span_labelled
    texts = {p.stem: p.read_text(encoding="utf-8") for p in (CHUNKING / "corpora").glob("*.md")}
    raw = {}
    import csv

    with (CHUNKING / "questions.csv").open(encoding="utf-8", newline="") as f:
        for n, row in enumerate(csv.DictReader(f), start=1):
            raw[str(n)] = [r["content"] for r in json.loads(row["references"])]
    excerpts = 0
    for q in bench.queries:
        assert q.relevant == {q.references[0].doc_id: 1}
        for span, content in zip(q.references, raw[q.query_id], strict=True):
            assert texts[span.doc_id][span.start : span.end] == content
            excerpts += 1
    assert excerpts == 539


def test_a_csv_without_chroma_header_is_refused(tmp_path: Path):
    path = tmp_path / "q.csv"
    path.write_text("a,b,c\n1,2,3\n", encoding="utf-8")
    with pytest.raises(QueryValidationError, match="header question,references,corpus_id"):
        load_benchmark(path)
