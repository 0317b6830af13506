"""The example project in examples/pytest-plugin, run as its user would: its suite passes on the
good search configuration and fails, naming the failed gate, on the worse one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pytest-plugin"


def _pytest(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    drop = {"QDRANT_URL", "RAGSONDE_COLLECTION", "RAGSONDE_CONFIG", "PYTEST_ADDOPTS"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["RAGSONDE_HOME"] = str(home)  # shared by both runs: the second one embeds nothing
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=EXAMPLE,
        timeout=600,
    )


@pytest.mark.slow
def test_example_passes_on_the_good_configuration_and_fails_on_the_worse(tmp_path):
    good = _pytest(tmp_path)
    assert good.returncode == 0, good.stdout + good.stderr
    assert "1 passed" in good.stdout
    worse = _pytest(tmp_path, "--retrieval-config", "worse")
    assert worse.returncode == 1, worse.stdout + worse.stderr
    assert "1 failed" in worse.stdout
    assert "retrieval gates failed" in worse.stdout
    assert "hit_rate@5>=0.8: got" in worse.stdout
