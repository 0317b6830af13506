"""What the fuzzing harness found, each case pinned as a deterministic test.

A case not fixed yet is marked ``xfail(strict=True)`` with the reason: it starts passing (and so
failing the suite) once fixed; then delete the mark.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragsonde.cli import _register, app

pytestmark = pytest.mark.slow  # runs a command


def test_prune_keep_beyond_sqlite_integers_is_a_clean_refusal(tmp_path: Path) -> None:
    _register()
    env = {k: None for k in os.environ if k.startswith(("RAGSONDE_", "QDRANT_"))}
    env["RAGSONDE_HOME"] = str(tmp_path / "home")
    result = CliRunner().invoke(app, ["history", "prune", "--keep", str(2**63)], env=env)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output


@pytest.mark.parametrize("subcommand", [["list"], ["trend", "ndcg@10"]])
@pytest.mark.parametrize("empty", [True, False])
def test_a_reading_history_command_leaves_the_file_as_it_was(
    tmp_path: Path, subcommand: list[str], empty: bool
) -> None:
    """An empty file given as --history is read as an empty history and left byte-identical;
    a missing one is not created."""
    _register()
    path = tmp_path / "history" / "history.sqlite"
    if empty:
        path.parent.mkdir()
        path.write_bytes(b"")
    env = {k: None for k in os.environ if k.startswith(("RAGSONDE_", "QDRANT_"))}
    env["RAGSONDE_HOME"] = str(tmp_path / "home")
    args = ["history", *subcommand, "--history", str(path), "--json"]
    result = CliRunner().invoke(app, args, env=env)
    # list: an empty list; trend: "no recorded run has ndcg@10", a clean refusal
    assert result.exit_code == (0 if subcommand == ["list"] else 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    if empty:
        assert path.read_bytes() == b""
    else:
        assert not path.parent.exists()


def test_a_judged_benchmark_that_is_not_utf8_is_a_validation_error(tmp_path: Path) -> None:
    from ragsonde.errors import QueryValidationError
    from ragsonde.labels.benchfile import read_entries

    path = tmp_path / "judged.jsonl"
    path.write_bytes(b"\x80\n")
    with pytest.raises(QueryValidationError):
        read_entries(path)


def test_a_questions_csv_with_a_huge_field_is_a_validation_error(tmp_path: Path) -> None:
    from ragsonde.errors import QueryValidationError
    from ragsonde.evaluate.datasets import load_benchmark

    path = tmp_path / "questions.csv"
    path.write_text("question,references,corpus_id\na," + "x" * 140_000 + ",c\n", "utf-8")
    with pytest.raises(QueryValidationError):
        load_benchmark(path)


def test_exporting_an_empty_history_over_a_file_leaves_the_file(tmp_path: Path) -> None:
    """``history export --out bench.jsonl`` with no recorded run refused to write nothing over
    the user's file (the fuzzing harness found bench.jsonl emptied); the history stays absent."""
    _register()
    target = tmp_path / "bench.jsonl"
    target.write_text('{"query_id": "q1", "query": "lidar range"}\n', encoding="utf-8")
    before = target.read_bytes()
    env = {k: None for k in os.environ if k.startswith(("RAGSONDE_", "QDRANT_"))}
    env["RAGSONDE_HOME"] = str(tmp_path / "home")
    result = CliRunner().invoke(app, ["history", "export", "--out", str(target)], env=env)
    assert result.exit_code == 2, result.output
    assert "no recorded run" in result.output
    assert target.read_bytes() == before
    assert not (tmp_path / "home" / "history.sqlite").exists()
