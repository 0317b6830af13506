"""``ingest`` and ``push`` create collections with a chosen quantization and HNSW graph;
``inspect`` shows them; an existing collection with other settings gets a warning."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragsonde.samples import robotics_docs
from tests.support import Cli


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("lidar", "imu"):
        shutil.copy(robotics_docs() / f"{name}.md", folder / f"{name}.md")
    return folder


@pytest.mark.slow
def test_ingest_creates_a_quantized_collection_that_inspect_shows(
    cli: Cli, docs: Path, tmp_path: Path
) -> None:
    home = str(tmp_path / "home")
    flags = ("--quantization", "scalar", "--hnsw-m", "32", "--hnsw-ef-construct", "200")
    out = cli("ingest", str(docs), "-c", "q", "--home", home, *flags, "--json")
    assert out.exit_code == 0, out.stderr
    assert json.loads(out.stdout)["warnings"] == []
    shown = cli("inspect", "-c", "q", "--home", home, "--json")
    assert shown.exit_code == 0, shown.stderr
    index = json.loads(shown.stdout)["index"]
    assert index["quantization"]["kind"] == "scalar"
    assert index["hnsw"] == {"m": 32, "ef_construct": 200}
    human = cli("inspect", "-c", "q", "--home", home)
    assert "quantization int8, HNSW m=32 ef_construct=200" in human.stdout
    # the settings apply at creation only: asking again for others names the difference
    again = cli("ingest", str(docs), "-c", "q", "--home", home, "--quantization", "binary-2bit")
    assert again.exit_code == 0, again.stderr
    assert "quantization: int8, not binary-2bit" in again.stderr.replace("\n", " ")
    # a plain ingest (nothing asked) is as before: no warning
    plain = cli("ingest", str(docs), "-c", "q", "--home", home, "--json")
    assert json.loads(plain.stdout)["warnings"] == []


def test_unknown_quantization_is_a_validation_error(cli: Cli, docs: Path, tmp_path: Path) -> None:
    out = cli(
        "ingest", str(docs), "--home", str(tmp_path / "h"), "--quantization", "int4", "--json"
    )
    assert out.exit_code == 2
    error = json.loads(out.stdout)["error"]
    assert error["code"] == "VALIDATION_ERROR" and "binary-1.5bit" in error["message"]


@pytest.mark.slow
def test_push_with_quantization_to_local_mode_says_not_measurable(
    cli: Cli, push_home: Path, tmp_path: Path
) -> None:
    target = f"path:{tmp_path / 'target'}"
    args = ("push", "-c", "docs", "--to", target, "--home", str(push_home))
    out = cli(*args, "--quantization", "binary-1bit", "--hnsw-m", "24", "--json")
    assert out.exit_code == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["copied"] == report["points"] > 0
    [warning] = report["warnings"]
    assert "not measurable on this backend" in warning and "binary-1bit" in warning
    shown = cli("inspect", "-c", "docs", "--json", env={"QDRANT_URL": target})
    assert shown.exit_code == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["index"] is None and data["index_measurable"] is False
    assert (
        "not measurable on this backend"
        in cli("inspect", "-c", "docs", env={"QDRANT_URL": target}).stdout
    )
