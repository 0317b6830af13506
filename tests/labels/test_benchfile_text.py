"""Benchmark and baseline files refuse text that is not Unicode where they are read, naming the
line and field (issue 33), and a file that is not UTF-8 names its line (it was a traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.history.baseline import load_exported
from ragsonde.labels import read_entries


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        (b'{"query_id": "a", "query": "x", "relevant": ["\\udc80"]}', "field relevant[0]"),
        (b'{"query_id": "\\ud800", "query": "x", "relevant": ["l"]}', "field query_id"),
        (b'{"query_id": "a", "query": "x \xff", "relevant": ["l"]}', "line 2 is not UTF-8 text"),
    ],
)
def test_a_bad_benchmark_line_is_named(tmp_path: Path, line: bytes, needle: str):
    path = tmp_path / "b.jsonl"
    path.write_bytes(b'{"query_id": "ok", "query": "fine", "relevant": ["l"]}\n' + line + b"\n")
    with pytest.raises(QueryValidationError, match="line 2") as err:
        read_entries(path)
    assert needle in err.value.message


def test_a_baseline_with_a_lone_surrogate_is_named(tmp_path: Path):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"fingerprint": {"benchmark": {"name": "\\udc80"}}}\n', encoding="utf-8")
    with pytest.raises(QueryValidationError, match=r"runs\.jsonl:1") as err:
        load_exported(path)
    assert "lone surrogate" in err.value.message and err.value.field == "baseline"


def test_a_benchmark_line_over_the_limit_is_refused_unread(tmp_path: Path):
    """A ragsonde JSON Lines benchmark was read line by line with no bound: a 200 MB line was
    held whole. It is read through ``inputs.text_lines`` now, like every other benchmark."""
    from ragsonde.inputs import MAX_LINE_BYTES

    path = tmp_path / "b.jsonl"
    with path.open("wb") as f:
        f.write(b'{"query_id": "ok", "query": "fine", "relevant": ["l"]}\n{"query": "')
        f.write(b"x" * (MAX_LINE_BYTES + 1))
    with pytest.raises(QueryValidationError, match="line 2 is longer than 64 MiB") as err:
        read_entries(path)
    assert err.value.field == "benchmark"
