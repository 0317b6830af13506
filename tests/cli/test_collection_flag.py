"""``-c ""`` is refused, not dropped: ``ragsonde batch`` took an empty ``--collection`` for none
given and ran the batch on the default collection. ``--home ""`` is refused too: it was the
working folder, where an ingest wrote its collections."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import Cli


@pytest.mark.parametrize("command", ["batch", "query"])
def test_an_empty_collection_flag_is_a_validation_error(
    cli: Cli, tmp_path: Path, command: str
) -> None:
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"query": "lidar"}) + "\n")
    arg = str(queries) if command == "batch" else "lidar"
    home = str(tmp_path / "home")
    result = cli(command, arg, "-c", "", "--home", home, "--json")
    assert result.exit_code == 2, result.output
    error = json.loads(result.stdout)
    error = error.get("error") or error["responses"][0]["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert "collection" in error["message"] and "rag_embedding" not in result.stdout


def test_an_empty_home_flag_is_refused_and_writes_nothing(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Lidar\n\nCalibrate the lidar before each run.\n")
    monkeypatch.chdir(tmp_path)
    result = cli("ingest", str(docs), "-c", "c", "--home", "")
    assert result.exit_code == 2, result.output
    assert "--home" in result.output and "must name a folder" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["docs"]


def test_an_empty_default_store_says_where_it_looked(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run from another folder than the one ingested in, a user read "there are no collections
    yet" with no word of which store was empty (./.ragsonde under the working folder)."""
    monkeypatch.chdir(tmp_path)
    result = cli("inspect", "mydocs")
    assert result.exit_code != 0
    said = " ".join(result.output.split())
    assert "COLLECTION_NOT_FOUND" in said and f"under the working folder {tmp_path}" in said
    named = cli("inspect", "mydocs", "--home", str(tmp_path / "elsewhere"))
    assert "working folder" not in named.output and "COLLECTION_NOT_FOUND" in named.output
