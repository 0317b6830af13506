"""Fixtures of the MCP tests: a root folder with a small benchmark (and a sibling outside it),
and ``ragsonde eval --json`` on that benchmark, the oracle every transport is checked against."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_room.drive import KS
from tests.support import home_env


@pytest.fixture(scope="session")
def bench_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root folder holding the first 12 sample questions (``small.jsonl``), and a sibling
    folder ``outside`` the servers may not read."""
    from ragsonde.samples import robotics_benchmark

    base = tmp_path_factory.mktemp("mcp")
    (base / "root").mkdir()
    (base / "outside").mkdir()
    lines = robotics_benchmark().read_text(encoding="utf-8").splitlines()[:12]
    (base / "root" / "small.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (base / "outside" / "secret.jsonl").write_text(lines[0] + "\n", encoding="utf-8")
    return base / "root"


@pytest.fixture(scope="session")
def cli_report(sample_home: Path, bench_root: Path) -> dict[str, Any]:
    """``ragsonde eval --json`` on ``small.jsonl`` as a user runs it (no history, no
    throughput pass)."""
    args = ["eval", str(bench_root / "small.jsonl"), "--collection", "robotics", "--json"]
    args += ["--no-record", "--no-throughput", "--k", ",".join(map(str, KS))]
    out = subprocess.run(
        [sys.executable, "-m", "ragsonde", *args],
        capture_output=True,
        text=True,
        env=home_env(sample_home),
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    report: dict[str, Any] = json.loads(out.stdout)
    return report
