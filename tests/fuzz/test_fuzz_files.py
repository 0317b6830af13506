"""Fuzzing every kind of file ragsonde reads (issue 33.7): benchmarks (JSONL, YAML, JSON, TREC
qrels, Chroma's questions CSV), configs (TOML), tune grids (TOML, YAML), saved reports, history
files, a judge's benchmark.

Each file is hostile content of its kind: valid-looking rows whose values are lone surrogates
(as JSON escapes), NUL bytes, huge, zero and negative numbers, deep nesting or fields of 140,000
characters; or bytes that are not UTF-8; or a truncated or empty file. The reader must give
back data or a ragsonde error (a command: exit 0, 1 or 2, no traceback), and leave the file
byte-identical. Files a command reads first are read through the command (in process, Typer's
CliRunner); the others through the library function every command reading them calls.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from ragsonde.cli import _register, app
from ragsonde.errors import RagsondeError
from tests.fuzz.hostile import FUZZ, JSON, LONG_TEXT, NUMBER, TEXT, fuzz

pytestmark = pytest.mark.slow  # runs commands on a store

EXAMPLES = 10
#: Crashes found in readers the hardfiles branch of issue 33 owns (text checks for files):
#: tolerated here, each pinned by a strict xfail in test_known_elsewhere.py. Delete an entry when
#: its xfail starts passing.
KNOWN_ELSEWHERE: dict[str, tuple[type[BaseException], ...]] = {}
VALUE = st.one_of(TEXT, LONG_TEXT, NUMBER, st.none(), st.lists(TEXT, max_size=3), JSON)


def _row(keys: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """A row with the keys a reader expects (some left out), hostile values, now and then an
    unknown key."""
    return st.builds(
        lambda known, extra: {**extra, **known},
        st.fixed_dictionaries({}, optional={k: VALUE for k in keys}),
        st.dictionaries(TEXT, VALUE, max_size=1),
    )


def _lines(rows: st.SearchStrategy[Any]) -> st.SearchStrategy[bytes]:
    """JSON Lines of ``rows`` (ensure_ascii: a lone surrogate travels as its escape), some lines
    broken."""
    line = st.one_of(rows.map(json.dumps), st.sampled_from(["{", "", "null", "[1]", "\t"]))
    return st.lists(line, max_size=5).map(lambda ls: ("\n".join(ls) + "\n").encode())


RAW = st.one_of(
    st.binary(max_size=200),
    st.sampled_from([b"", b"\x00" * 10, b"\xff\xfe\x00", b"SQLite format 3\x00" + b"\x00" * 84]),
    TEXT.map(lambda s: s.encode("utf-8", "surrogatepass")),  # CESU-style bytes: not UTF-8
)
BENCH_ROW = _row(["query_id", "query", "relevant", "filters", "references", "qrels"])
CSV = st.lists(
    st.lists(st.one_of(TEXT, LONG_TEXT, NUMBER.map(str)), min_size=1, max_size=4),
    max_size=4,
).map(
    lambda rows: (
        "question,references,corpus_id\n"
        + "\n".join(",".join(json.dumps(c) if i == 1 else c for i, c in enumerate(r)) for r in rows)
    )
)


def _csv_bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _toml(table: dict[str, Any]) -> bytes:
    out = []
    for key, value in table.items():
        shown = json.dumps(value) if not isinstance(value, (dict, list)) else json.dumps(str(value))
        out.append(f"{json.dumps(key)} = {shown}")
    return "\n".join(out).encode("utf-8", "surrogatepass")


TOML = st.one_of(
    st.dictionaries(
        st.sampled_from(["top_k", "collection", "embedder", "k1", "grid", "[search]", "x"]),
        st.one_of(TEXT, NUMBER, st.booleans()),
        max_size=4,
    ).map(_toml),
    RAW,
)
YAML = st.one_of(
    st.lists(BENCH_ROW, max_size=3).map(
        lambda rows: json.dumps(rows).encode()  # JSON is YAML
    ),
    st.sampled_from([b"- &a [*a]\n", b"!!python/object:os.system x\n", b"a: [\n", b"? ? ?\n"]),
    RAW,
)
#: File name -> contents: one of each kind of file a benchmark can be.
BENCHMARKS = {
    "bench.jsonl": st.one_of(_lines(BENCH_ROW), RAW),
    "bench.json": st.one_of(JSON.map(lambda v: json.dumps(v).encode()), RAW),
    "bench.yaml": YAML,
    "questions.csv": st.one_of(CSV.map(_csv_bytes), RAW),
    "qrels.tsv": st.one_of(
        st.lists(st.lists(st.one_of(TEXT, NUMBER.map(str)), max_size=5), max_size=4).map(
            lambda rows: _csv_bytes("\n".join(" ".join(r) for r in rows))
        ),
        RAW,
    ),
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with an empty collection ``docs``, so eval reads its benchmark."""
    from ragsonde.config import Settings
    from ragsonde.store import open_store

    folder = tmp_path_factory.mktemp("fuzzfiles") / "home"
    store = open_store(Settings(home=folder, collection="docs"))
    store.create_collection("docs", 384)
    store.close()
    return folder


def _env(home: Path) -> dict[str, str | None]:
    env: dict[str, str | None] = {
        k: None for k in os.environ if k.startswith(("RAGSONDE_", "QDRANT_"))
    }
    env["RAGSONDE_HOME"] = str(home)
    return env


def _command(home: Path, argv: list[str], path: Path, content: bytes) -> None:
    """``ragsonde ARGV`` on the file: exit 0/1/2, no traceback, the file unchanged."""
    result = CliRunner().invoke(app, argv, env=_env(home))
    shown = f"argv={argv!r} content={content[:300]!r}\n{result.output[-2000:]}"
    if isinstance(result.exception, KNOWN_ELSEWHERE.get(argv[0], ())):
        reject()  # pinned by a strict xfail in test_known_elsewhere.py until hardfiles lands
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(shown) from result.exception
    assert result.exit_code in {0, 1, 2}, shown
    assert "Traceback" not in result.output, shown
    assert path.read_bytes() == content, shown


def _library(read: Callable[[Path], Any], path: Path, content: bytes) -> None:
    """``read(path)`` gives data or a ragsonde error, and leaves the file unchanged."""
    try:
        with contextlib.suppress(RagsondeError):
            read(path)
    except KNOWN_ELSEWHERE.get(read.__name__, ()):
        reject()  # pinned by a strict xfail in test_known_elsewhere.py until hardfiles lands
    assert path.read_bytes() == content


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_hostile_benchmarks_through_eval(name: str, home: Path, tmp_path: Path) -> None:
    _register()
    path = tmp_path / name

    @settings(FUZZ, max_examples=EXAMPLES)
    @given(content=BENCHMARKS[name])
    def run(content: bytes) -> None:
        path.write_bytes(content)
        _command(home, ["eval", str(path), "--collection", "docs", "--k", "1"], path, content)

    fuzz(run)


REPORT = st.one_of(
    st.builds(
        lambda per_query, metrics, extra: {
            "schema_version": "1.4",
            "per_query": per_query,
            "metrics": metrics,
            **extra,
        },
        st.dictionaries(TEXT, st.one_of(st.builds(dict, metrics=JSON), JSON), max_size=3),
        st.dictionaries(TEXT, NUMBER, max_size=3),
        st.dictionaries(TEXT, JSON, max_size=2),
    ).map(lambda d: json.dumps(d).encode()),
    RAW,
)


def test_hostile_reports_through_compare(home: Path, tmp_path: Path) -> None:
    _register()
    a, b = tmp_path / "a.json", tmp_path / "b.json"

    @settings(FUZZ, max_examples=EXAMPLES)
    @given(content=REPORT)
    def run(content: bytes) -> None:
        a.write_bytes(content)
        b.write_bytes(content)
        _command(home, ["compare", str(a), str(b)], a, content)

    fuzz(run)


def test_hostile_configs_through_config(home: Path, tmp_path: Path) -> None:
    _register()
    path = tmp_path / "ragsonde.toml"

    @settings(FUZZ, max_examples=EXAMPLES)
    @given(content=TOML)
    def run(content: bytes) -> None:
        path.write_bytes(content)
        _command(home, ["config", "--config", str(path), "--json"], path, content)

    fuzz(run)


def test_hostile_history_files_through_history_list(home: Path, tmp_path: Path) -> None:
    _register()
    path = tmp_path / "history.sqlite"

    @settings(FUZZ, max_examples=EXAMPLES)
    @given(content=RAW.filter(bool))  # an empty file is made a history: test_known_elsewhere
    def run(content: bytes) -> None:
        path.write_bytes(content)
        for argv in (["history", "list"], ["history", "show", "1"]):
            _command(home, [*argv, "--history", str(path)], path, content)

    fuzz(run)


def test_hostile_grids_and_judge_benchmarks_through_their_readers(tmp_path: Path) -> None:
    from ragsonde.labels.benchfile import read_entries
    from ragsonde.tune import load_grid

    grids = {"grid.toml": TOML, "grid.yaml": YAML}

    @settings(FUZZ, max_examples=EXAMPLES)
    @given(name=st.sampled_from(sorted(grids)), data=st.data())
    def run(name: str, data: st.DataObject) -> None:
        content = data.draw(grids[name])
        path = tmp_path / name
        path.write_bytes(content)
        _library(load_grid, path, content)
        bench = tmp_path / "judged.jsonl"
        judged = data.draw(BENCHMARKS["bench.jsonl"])
        bench.write_bytes(judged)
        _library(read_entries, bench, judged)

    fuzz(run)
