"""Two newcomer mistakes whose errors sent users the wrong way: a benchmark naming files
(``lidar.md``) where a folder's document ids are ``lidar``, and an eval on the empty collection
a failed ingest leaves, both answered "set --field doc_id=PATH"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsonde.samples import robotics_docs
from tests.support import Cli

pytestmark = pytest.mark.slow  # the real model


def test_file_names_as_ids_and_an_empty_collection_say_what_is_wrong(
    cli: Cli, tmp_path: Path
) -> None:
    home = str(tmp_path / "home")
    assert cli("ingest", str(robotics_docs()), "-c", "docs", "--home", home).exit_code == 0
    bench = tmp_path / "bench.jsonl"
    bench.write_text(
        json.dumps({"query": "how do I calibrate the lidar", "relevant": ["lidar.md"]})
    )
    named = cli("eval", str(bench), "-c", "docs", "--home", home, "--no-record")
    said = " ".join(named.output.split())
    assert named.exit_code == 1 and "paths without the suffix (lidar.md → lidar)" in said
    (tmp_path / "empty").mkdir()
    assert cli("ingest", str(tmp_path / "empty"), "-c", "e1", "--home", home).exit_code == 1
    empty = cli("eval", str(bench), "-c", "e1", "--home", home, "--no-record")
    said = " ".join(empty.output.split())
    assert "Collection 'e1' is empty" in said and "--field" not in said
