"""Reading traffic: query logs and OTLP JSON, format from content, shaping, and hostile files.

The OTLP files here are written by the OpenTelemetry SDK itself (spans made with a real tracer,
encoded with the OTLP encoder and protobuf's JSON printer), not by hand.
"""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.datasets import load_benchmark
from ragsonde.traffic.formats import detect_format
from ragsonde.traffic.logs import RowError, parse_time, row_query
from ragsonde.traffic.read import read_traffic, write_benchmark
from ragsonde.traffic.records import ReadStats
from tests.traffic.support import otlp_json_lines, retriever_span

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def _jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
        encoding="utf-8",
    )
    return path


def test_a_jsonl_log_merges_duplicates_with_their_weight_and_counts_what_it_skips(
    tmp_path: Path,
) -> None:
    log = _jsonl(
        tmp_path / "chat.log",  # no telling suffix: the content decides
        [
            {"query": "How does lidar work?", "timestamp": "2026-11-02T10:00:00Z"},
            {"query": "how does   LIDAR work?", "timestamp": "2026-11-01T08:00:00Z"},
            {"query": "battery voltage", "ids": ["a", "b"], "scores": [0.9, 0.5], "top_k": 2},
            "this line is not JSON",
            {"session": "s1"},
            ["a", "list"],
        ],
    )
    traffic = read_traffic([log])
    by_text = {q.query: q for q in traffic.queries}
    lidar = by_text["How does lidar work?"]
    assert lidar.weight == 2 and lidar.first_seen == datetime(2026, 11, 1, 8, tzinfo=UTC)
    battery = by_text["battery voltage"]
    assert battery.production is not None and battery.production.ids == ["a", "b"]
    assert battery.production.scores == [0.9, 0.5] and battery.production.top_k == 2
    s = traffic.stats
    assert (s.records, s.duplicates_merged, s.malformed, s.no_query_text) == (3, 1, 2, 1)
    assert s.files == {str(log): "jsonl"} and any("chat.log:4" in e for e in s.examples)


def test_a_csv_log_is_read_by_its_query_column_and_its_ids(tmp_path: Path) -> None:
    log = tmp_path / "log.json"  # a misleading suffix: it is CSV
    log.write_text(
        'timestamp,question,ids\n2026-11-01T10:00:00Z,"where, exactly, is the IMU?",a|b\n'
        "1761991200,second question,\n2026-11-01T11:00:00Z,,\n",
        encoding="utf-8",
    )
    assert detect_format(log) == "csv"
    traffic = read_traffic([log])
    assert [q.query for q in traffic.queries] == ["where, exactly, is the IMU?", "second question"]
    first = traffic.queries[0]
    assert first.production is not None and first.production.ids == ["a", "b"]
    assert traffic.queries[1].first_seen == datetime.fromtimestamp(1761991200, tz=UTC)
    assert traffic.stats.no_query_text == 1


def test_a_spreadsheet_header_names_its_columns_in_any_case(tmp_path: Path) -> None:
    """``Query;Timestamp`` (Excel's export where ``,`` is the decimal mark) was refused: "none is
    a query column (name one query, ...)". ``query`` and ``Query`` together keep their cases."""
    log = tmp_path / "export.csv"
    log.write_bytes(
        "\ufeffQuery;Timestamp;IDs\nwhere is the IMU?;2026-11-01T10:00:00Z;a|b\n".encode()
    )
    (first,) = read_traffic([log]).queries
    assert first.query == "where is the IMU?" and first.first_seen is not None
    assert first.production is not None and first.production.ids == ["a", "b"]
    both = tmp_path / "both.csv"
    both.write_text("query,Query\nlidar,battery\n", encoding="utf-8")
    assert [q.query for q in read_traffic([both]).queries] == ["lidar"]


def test_otlp_json_from_the_sdk_gives_openinference_and_genai_retrievals(tmp_path: Path) -> None:
    spans = [
        retriever_span("openinference", "what is lidar?", ids=["p1", "p2"], scores=[0.8, 0.4]),
        retriever_span("genai", "battery care", ids=["p3"], scores=[0.7], top_k=3),
        retriever_span("genai", None),  # a retrieval without query text: counted
        retriever_span("other", "an LLM call"),  # not a retrieval: counted apart
    ]
    path = tmp_path / "traces.bin"
    path.write_bytes(gzip.compress(otlp_json_lines(spans).encode()))
    assert detect_format(path) == "otlp"
    traffic = read_traffic([path])
    got = {q.query: q for q in traffic.queries}
    assert set(got) == {"what is lidar?", "battery care"}
    lidar, battery = got["what is lidar?"].production, got["battery care"].production
    assert lidar is not None and lidar.ids == ["p1", "p2"] and lidar.scores == [0.8, 0.4]
    assert battery is not None and battery.ids == ["p3"] and battery.top_k == 3
    assert battery.collection == "docs"
    assert traffic.stats.no_query_text == 1 and traffic.stats.other_spans == 1
    assert all(q.first_seen is not None for q in traffic.queries)


def test_a_production_field_that_is_no_number_counts_its_span_malformed(tmp_path: Path) -> None:
    """A span whose top_k or document score is there but is no number is counted malformed,
    with why, as a log row with such a field is; it was read as absent, so a production top_k of
    "ten" hid the mismatch it explains."""
    spans = [
        retriever_span("genai", "battery care", ids=["p3"], scores=[0.7], top_k=3),
        retriever_span("genai", "what is lidar?", ids=["p1"], scores=[0.8], top_k="ten"),
        retriever_span("genai", "radar range", ids=["p2"], scores=["high"], top_k=3),
        retriever_span("genai", "wheel wear", ids=[{"a": 1}], scores=[0.5]),  # an object
        retriever_span("genai", "arm reach", ids=["p1", "p2"], scores=[0.9, 0.8], top_k=2.5),
        retriever_span("openinference", "dock pins", ids=["p4", True], scores=[0.9, 0.8]),
        retriever_span("genai", "sonar depth"),  # no production fields at all: fine
    ]
    path = tmp_path / "traces.json"
    path.write_text(otlp_json_lines(spans), encoding="utf-8")
    traffic = read_traffic([path])
    assert sorted(q.query for q in traffic.queries) == ["battery care", "sonar depth"]
    assert traffic.stats.malformed == 5
    assert any("top_k is 'ten'" in e for e in traffic.stats.examples)
    assert any("document 0's score is 'high'" in e for e in traffic.stats.examples)
    assert any("document 0's id is {'a': 1}, not an id" in e for e in traffic.stats.examples)
    assert any("top_k is 2.5, not a whole number" in e for e in traffic.stats.examples)
    assert any("document 1's id is True, not an id" in e for e in traffic.stats.examples)


def test_since_until_and_a_sample_stratified_by_day(tmp_path: Path) -> None:
    rows = []
    for day, n in ((0, 60), (1, 30), (2, 10)):  # 100 distinct queries over three days
        rows += [
            {"query": f"q{day}-{i}", "timestamp": (T0 + timedelta(days=day, minutes=i)).isoformat()}
            for i in range(n)
        ]
    log = _jsonl(tmp_path / "log.jsonl", rows)
    window = read_traffic([log], since=T0 + timedelta(days=1), until=T0 + timedelta(days=2))
    assert len(window.queries) == 30 and window.stats.outside_window == 70
    sample = read_traffic([log], sample=20, seed=7)
    per_day = Counter(q.first_seen.day for q in sample.queries if q.first_seen)
    assert per_day == {1: 12, 2: 6, 3: 2}  # 60/30/10 of 100 -> 12/6/2 of 20
    again = read_traffic([log], sample=20, seed=7)
    other = read_traffic([log], sample=20, seed=8)
    assert [q.query for q in again.queries] == [q.query for q in sample.queries]
    assert [q.query for q in other.queries] != [q.query for q in sample.queries]
    assert sample.stats.sampled_out == 80


def test_the_saved_benchmark_reads_back_for_judge_and_is_refused_by_eval_with_the_way_out(
    tmp_path: Path,
) -> None:
    log = _jsonl(
        tmp_path / "log.jsonl",
        [{"query": "a", "ids": ["x"]}, {"query": "b"}, {"query": "A"}],
    )
    traffic = read_traffic([log])
    saved = write_benchmark(traffic.queries, tmp_path / "traffic.jsonl")
    rows = [json.loads(line) for line in saved.read_text(encoding="utf-8").splitlines()]
    assert rows[0]["weight"] == 2 and rows[0]["production"]["ids"] == ["x"]
    kept = load_benchmark(saved, keep_unlabelled=True)
    assert [q.text for q in kept.queries] == ["a", "b"] and kept.queries[0].relevant == {}
    with pytest.raises(QueryValidationError, match="ragsonde judge"):
        load_benchmark(saved)
    again = read_traffic([saved])  # ragsonde traffic reads its own benchmark back
    assert [(q.query, q.weight) for q in again.queries] == [("a", 2), ("b", 1)]


def test_a_partly_labelled_benchmark_evaluates_its_labelled_rows_and_lists_the_others(
    tmp_path: Path,
) -> None:
    path = _jsonl(tmp_path / "b.jsonl", [{"query": "a", "relevant": ["d1"]}, {"query": "b"}])
    bench = load_benchmark(path)
    assert [q.text for q in bench.queries] == ["a"] and bench.skipped == ["2: unlabelled"]


# -- hostile files: a clear error, or a counted skip and nothing else lost -------------------


def test_a_binary_file_is_refused_naming_what_it_is(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(QueryValidationError, match="binary"):
        read_traffic([path])


def test_bytes_that_are_not_utf8_name_their_line(tmp_path: Path) -> None:
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"query": "ok"}\n{"query": "caf\xe9"}\n')
    with pytest.raises(QueryValidationError, match=r"line 2 is not UTF-8"):
        read_traffic([path])


def test_truncated_otlp_json_lines_keep_every_whole_line(tmp_path: Path) -> None:
    text = otlp_json_lines(
        [retriever_span("openinference", f"question {i}") for i in range(3)], per_line=1
    )
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) - 40], encoding="utf-8")  # the last request cut short
    traffic = read_traffic([path])
    assert [q.query for q in traffic.queries] == ["question 0", "question 1"]
    assert traffic.stats.malformed == 1


def test_a_truncated_single_otlp_document_is_a_clear_error(tmp_path: Path) -> None:
    doc = json.loads(otlp_json_lines([retriever_span("genai", "q")]))
    path = tmp_path / "doc.json"
    path.write_text(json.dumps(doc, indent=2)[:-30], encoding="utf-8")
    with pytest.raises(QueryValidationError, match="OTLP JSON ends or breaks at line"):
        read_traffic([path])


def test_spans_without_query_text_only_are_an_error_that_counts_them(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(otlp_json_lines([retriever_span("genai", None)] * 2), encoding="utf-8")
    with pytest.raises(QueryValidationError, match="2 without query text"):
        read_traffic([path])


def test_a_csv_without_a_query_column_names_its_columns(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("user,answer\nbob,42\n", encoding="utf-8")
    with pytest.raises(QueryValidationError, match="columns user, answer"):
        read_traffic([path])


def test_a_csv_field_over_the_csv_limit_is_a_counted_skip_and_the_rest_is_read(
    tmp_path: Path,
) -> None:
    """A 200,000-character cell (over csv's 131,072) was a traceback (``_csv.Error``)."""
    path = tmp_path / "t.csv"
    path.write_text("query\nbattery\n" + "x" * 200_000 + "\nwifi setup\n", encoding="utf-8")
    traffic = read_traffic([path])
    assert [q.query for q in traffic.queries] == ["battery", "wifi setup"]
    assert traffic.stats.malformed == 1
    assert any("t.csv:3" in e and "not a CSV row" in e for e in traffic.stats.examples)
    header = tmp_path / "h.csv"
    header.write_text("query," + "y" * 200_000 + "\nbattery,1\n", encoding="utf-8")
    with pytest.raises(QueryValidationError, match="not a CSV header"):
        read_traffic([header])


@pytest.mark.parametrize(
    "first", ['{"query": "how do I cali', "garbage not json", "[1, 2, 3]", '{"query": 5}']
)
def test_a_bad_first_line_is_counted_and_the_rest_of_the_log_read(
    tmp_path: Path, first: str
) -> None:
    """The format was told by the first line alone: a cut one refused the whole log as "JSON of
    another kind", a line of words read it as CSV, ``[1, 2, 3]`` as OTLP with nothing found."""
    rows = [json.dumps({"query": f"question {i}"}) for i in range(5)]
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join([first, *rows]) + "\n", encoding="utf-8")
    assert detect_format(log) == "jsonl"
    traffic = read_traffic([log])
    assert [q.query for q in traffic.queries] == [f"question {i}" for i in range(5)]
    assert traffic.stats.malformed == 1 and "log.jsonl:1" in traffic.stats.examples[0]


def test_a_first_line_over_the_64_kib_looked_at_is_read_as_a_log(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    rows = [{"query": "long", "pad": "x" * 70_000}, {"query": "short"}]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert [q.query for q in read_traffic([log]).queries] == ["long", "short"]


def test_json_of_another_kind_is_refused_naming_what_was_found(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text('{\n  "data": [1, 2]\n}\n', encoding="utf-8")
    with pytest.raises(QueryValidationError, match="neither a query log"):
        read_traffic([path])


def test_a_gzip_file_cut_short_is_a_clear_error(tmp_path: Path) -> None:
    text = otlp_json_lines([retriever_span("genai", f"q{i}") for i in range(50)], per_line=1)
    data = gzip.compress(text.encode())
    path = tmp_path / "cut.json.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(QueryValidationError, match=r"cannot be read.*ended before"):
        read_traffic([path])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)
log_keys = st.sampled_from(
    ["query", "query_id", "timestamp", "first_seen", "session", "weight", "ids", "scores",
     "top_k", "threshold", "collection", "mode", "production", "other"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(log_keys, json_values, max_size=6))
def test_any_log_row_is_read_or_counted_never_raised(row: dict[str, object]) -> None:
    stats = ReadStats()
    got = row_query(row, "row", stats)
    assert (got is None) == (stats.malformed + stats.no_query_text == 1)
    prod = got.production if got is not None else None
    if prod is not None and prod.scores is not None:  # what is read is what production returned
        assert all(math.isfinite(s) for s in prod.scores)
        assert not prod.ids or len(prod.ids) == len(prod.scores)


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"ids": [["p1"], "p2"]}, "ids[0] is ['p1'], not an id"),
        ({"ids": ["p1", {"a": 2}]}, "ids[1] is {'a': 2}, not an id"),
        ({"ids": ["p1", False]}, "ids[1] is False, not an id"),
        ({"ids": ["p1", "p2"], "scores": [0.9]}, "2 returned ids and 1 scores"),
        ({"ids": ["p1"], "scores": [float("nan")]}, "scores[0] is nan, not a finite number"),
        ({"ids": ["p1"], "scores": [None]}, "scores hold a null"),
        ({"top_k": "ten"}, "top_k is 'ten', not a whole number"),
        ({"top_k": 2.5}, "top_k is 2.5, not a whole number"),
        ({"top_k": 0}, "top_k is 0, below 1"),
        ({"threshold": float("inf")}, "threshold is inf, not a finite number"),
        ({"weight": 2.5}, "weight is 2.5, not a whole number"),
        # 1e308 reads from a request's JSON as an integer: shown cut, not in 309 digits
        ({"timestamp": 10**308}, "timestamp 1" + "0" * 38 + "… is too large"),
    ],
)
def test_a_log_row_with_a_wrong_production_field_is_counted_malformed_naming_it(
    fields: dict[str, object], why: str
) -> None:
    # read as str() and float(): an id [1] became "[1]" and a NaN score was kept, silently
    stats = ReadStats()
    assert row_query({"query": "lidar range", **fields}, "chat.jsonl:3", stats) is None
    assert stats.malformed == 1 and stats.examples[0].startswith("chat.jsonl:3: ")
    assert why in stats.examples[0], stats.examples[0]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1_790_000_000, datetime.fromtimestamp(1_790_000_000, tz=UTC)),  # seconds
        (1_790_000_000_123, datetime.fromtimestamp(1_790_000_000.123, tz=UTC)),  # ms
        (1_790_000_000_123_456, datetime.fromtimestamp(1_790_000_000.123456, tz=UTC)),  # µs
        ("1790000000123456789", datetime.fromtimestamp(1_790_000_000.123456789, tz=UTC)),  # ns
    ],
)
def test_epoch_timestamps_are_read_in_seconds_ms_us_or_ns(
    value: object, expected: datetime
) -> None:
    got = parse_time(value)
    assert got is not None and abs((got - expected).total_seconds()) < 1e-3


@pytest.mark.parametrize("value", [1e300, "1e25", -1e21, 10**30])
def test_an_epoch_timestamp_beyond_nanoseconds_is_refused_not_shrunk(value: object) -> None:
    # divided by 1000 until it fitted: 1e300 was read as 2001-09-09
    with pytest.raises(RowError, match="too large for epoch"):
        parse_time(value)


def _packed(kind: str, path: Path, log: bytes) -> None:
    """``log`` packed as ``kind`` by the standard library's own writers."""
    import bz2
    import io
    import lzma
    import tarfile
    import zipfile

    if kind == "bzip2":
        path.write_bytes(bz2.compress(log))
    elif kind == "xz":
        path.write_bytes(lzma.compress(log))
    elif kind == "zip":
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("chat.jsonl", log)
    else:  # a gzipped tar (gzip is read, the tar inside it is not a log)
        with tarfile.open(path, "w:gz" if kind == "tar.gz" else "w") as tar:
            info = tarfile.TarInfo("chat.jsonl")
            info.size = len(log)
            tar.addfile(info, io.BytesIO(log))


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("bzip2", "bzip2-compressed, and ragsonde reads traffic as plain or gzip-compressed text"),
        ("xz", "xz-compressed"),
        ("zip", "a zip archive"),
        ("tar", "a tar archive"),
        ("tar.gz", "a tar archive"),
    ],
)
def test_a_packed_log_is_named_with_how_to_unpack_it(tmp_path: Path, kind: str, words: str) -> None:
    # each said "binary data (NUL bytes)" or "control characters", not what it was
    path = tmp_path / "chat log.bin"
    _packed(kind, path, b'{"query": "how does lidar work?"}\n' * 50)
    with pytest.raises(QueryValidationError) as e:
        detect_format(path)
    assert words in str(e.value)
    assert f"'{path}'" in str(e.value)  # the command to run, the path quoted for the shell
