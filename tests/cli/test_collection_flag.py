"""``-c ""`` is refused, not dropped: ``ragsonde batch`` took an empty ``--collection`` for none
given and ran the batch on the default collection."""

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
