"""Traffic files an attacker (or an ordinary export) sends, found by an audit: each is read
right or counted, never a traceback, and never read wrong without a word."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.traffic.read import benchmark_row, read_traffic, scan_traffic
from tests.traffic.support import otlp_json_lines, retriever_span


def _lines(path: Path, rows: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def _both(path: Path, **kw: object) -> list[str]:
    """The query ids the in-memory and the streaming reading give (they must agree)."""
    memory = [q.query_id for q in read_traffic([path], **kw).queries]  # type: ignore[arg-type]
    streamed = [q.query_id for q in scan_traffic([path], **kw).queries]  # type: ignore[arg-type]
    assert memory == streamed
    return memory


def test_texts_sharing_an_id_are_never_given_another_logged_id(tmp_path: Path) -> None:
    """``x``, ``x``, ``x-2``: the second ``x`` was named ``x-2`` too, which crashed the report
    (its heaps compared two rows) and saved a benchmark eval refused."""
    log = _lines(
        tmp_path / "ids.jsonl",
        [
            {"query": "lidar range", "query_id": "x"},
            {"query": "sonar crosstalk", "query_id": "x"},
            {"query": "imu drift", "query_id": "x-2"},
            {"query": "gps fix", "query_id": "x"},
            {"query": "wheel odometry", "query_id": "x-3"},
        ],
    )
    ids = _both(log)
    assert len(set(ids)) == len(ids) == 5
    assert ids == ["x", "x-4", "x-2", "x-5", "x-3"]
    for seed in range(4):  # a sample keeps each query's own id
        sampled = _both(log, sample=2, seed=seed)
        assert set(sampled) <= set(ids) and len(set(sampled)) == 2


def test_standard_csv_with_doubled_quotes_is_read_as_written(tmp_path: Path) -> None:
    """What csv.writer, Excel and pandas write: the dialect sniffed from the header turned
    doublequote off, so a quoted query came back altered and a JSON list of ids unreadable."""
    path = tmp_path / "log.csv"
    with path.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["query", "ids"])
        w.writerow(['the robot says "bumper hit"', json.dumps(["a", "b"])])
        w.writerow(['what does "RTK fix" mean, for gps', "x"])
    traffic = read_traffic([path])
    queries = {q.query: q for q in traffic.queries}
    assert set(queries) == {'the robot says "bumper hit"', 'what does "RTK fix" mean, for gps'}
    production = queries['the robot says "bumper hit"'].production
    assert production is not None and production.ids == ["a", "b"]
    assert traffic.stats.malformed == 0


def test_rows_that_crashed_the_read_are_counted_malformed(tmp_path: Path) -> None:
    deep = '{"query": "deep", "x": ' + "[" * 5000 + "]" * 5000 + "}"
    log = _lines(
        tmp_path / "log.jsonl",
        [
            deep,
            '{"query": "lidar", "query_id": "\\ud800"}',
            '{"query": "lidar 2", "ids": ["\\ud800"]}',
            '{"query": "lidar 3", "ids": ["a"], "collection": "\\ud800"}',
            {"query": "lidar 4", "query_id": {"a": 1}},
            {"query": "lidar 5", "timestamp": "0001-01-01T00:00:00+14:00"},
            {"query": "lidar 6", "timestamp": "9999-12-31T23:59:59-14:00"},
            {"query": "fine"},
        ],
    )
    for traffic in (read_traffic([log]), scan_traffic([log])):
        assert [q.query for q in traffic.queries] == ["fine"]
        assert traffic.stats.malformed == 7, traffic.stats.examples


def _otlp(path: Path, requests: list[object]) -> Path:
    return _lines(path, requests)


def test_otlp_values_of_the_wrong_kind_cost_their_span_or_request_only(tmp_path: Path) -> None:
    good = json.loads(
        otlp_json_lines([retriever_span("genai", "lidar range", ids=["a"], scores=[0.5])])
    )
    span = good["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    unrelated = {
        "spanId": "z",
        "attributes": [{"key": "http.status", "value": {"intValue": "2.5"}}],
    }
    bad_k = json.loads(json.dumps(span))
    bad_k["spanId"] = "k"
    bad_k["attributes"].append({"key": "gen_ai.retrieval.top_k", "value": {"intValue": "ten"}})
    bad_docs = json.loads(json.dumps(span))
    bad_docs["spanId"] = "d"
    for a in bad_docs["attributes"]:
        if a["key"] == "gen_ai.retrieval.documents":
            a["value"] = {"stringValue": '[{"id": "a", "score": 0.5'}
    surrogate = json.loads(json.dumps(span))
    surrogate["spanId"] = "s"
    surrogate["attributes"].append({"key": "note", "value": {"stringValue": "\ud800"}})
    good["resourceSpans"][0]["scopeSpans"][0]["spans"] = [
        unrelated,
        bad_k,
        bad_docs,
        surrogate,
        span,
    ]
    path = tmp_path / "traces.jsonl"
    path.write_text(
        json.dumps(good)
        + "\n"
        + json.dumps({"resourceSpans": 7})
        + "\n"
        + json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": 5}]}]})
        + "\n"
    )
    traffic = read_traffic([path])
    assert [q.query for q in traffic.queries] == ["lidar range"]
    assert traffic.queries[0].weight == 2  # a lone surrogate in an attribute no one reads: read
    assert traffic.stats.other_spans == 1
    assert traffic.stats.malformed == 4, traffic.stats.examples  # k, docs, 7, 5
    said = " ".join(traffic.stats.examples)
    assert "top_k" in said and "gen_ai.retrieval.documents" in said and "not a list" in said


def test_a_sample_smaller_than_the_days_takes_days_by_the_seed_not_the_oldest(
    tmp_path: Path,
) -> None:
    rows = [
        {"query": f"lidar q {d} {i}", "timestamp": f"2026-11-{d:02d}T12:00:00Z"}
        for d in range(1, 31)
        for i in range(10)
    ]
    log = _lines(tmp_path / "d30.jsonl", rows)
    days = []
    for seed in range(4):
        got = read_traffic([log], sample=10, seed=seed).queries
        assert len(got) == 10
        days.append(frozenset(q.first_seen.date().day for q in got if q.first_seen))
    assert len(set(days)) > 1 and any(max(d) > 10 for d in days)


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (json.dumps([{"query": "lidar"}, {"query": "gps"}]), "a JSON array"),
        (
            '{\n  "n_queries": 1,\n  "weak_share": 0.0,\n  "queries": [\n    {"query": "x"}\n  ]\n}\n',
            "traffic report",
        ),
        ("\ufeffquery\nlidar\n".encode("utf-16"), "UTF-16"),
        (b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", "a PDF document"),
    ],
)
def test_files_of_another_kind_are_named_for_what_they_are(
    tmp_path: Path, content: str | bytes, says: str
) -> None:
    path = tmp_path / "log"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(QueryValidationError, match=says):
        read_traffic([path])


def test_the_saved_benchmark_keeps_the_settings_production_logged(tmp_path: Path) -> None:
    log = _lines(
        tmp_path / "log.jsonl",
        [{"query": "lidar", "ids": ["a"], "scores": [0.5], "top_k": 3, "mode": "hybrid"}],
    )
    (q,) = read_traffic([log]).queries
    row = benchmark_row(q)
    assert row["production"] == {"ids": ["a"], "scores": [0.5], "top_k": 3, "mode": "hybrid"}
    back = _lines(tmp_path / "back.jsonl", [row])
    (again,) = read_traffic([back]).queries
    assert again.production == q.production


def test_a_collector_request_over_64_kib_a_line_is_read_as_otlp(tmp_path: Path) -> None:
    """A Collector's file exporter writes one request of many spans a line: a first line over
    the 64 KiB looked at was taken for a query log, and every span for a row without a query."""
    content = "retrieved text " * 40
    spans = [
        retriever_span("openinference", f"question {i} about lidar", ids=[f"d{i}"], scores=[0.5])
        for i in range(300)
    ]
    line = json.loads(otlp_json_lines(spans))
    for span in line["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["attributes"].append({"key": "note", "value": {"stringValue": content}})
    path = tmp_path / "collector.jsonl"
    path.write_text(json.dumps(line) + "\n" + json.dumps(line) + "\n")
    assert path.stat().st_size > 2 * 64 * 1024
    traffic = read_traffic([path])
    assert len(traffic.queries) == 300 and traffic.stats.no_query_text == 0
    assert traffic.stats.duplicates_merged == 300
