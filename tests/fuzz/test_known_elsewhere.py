"""What the fuzzing harness found in code the ``hardfiles`` branch of issue 33 owns, pinned.

Each test is the found case, deterministic, marked ``xfail(strict=True)``: it starts passing (and
so failing the suite) once that branch is merged; then delete the mark here and the matching
entry of ``KNOWN_ELSEWHERE`` in test_fuzz_cli.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragsonde.cli import _register, app

pytestmark = pytest.mark.slow  # runs a command


@pytest.mark.xfail(
    strict=True,
    reason="hardfiles: Typer min/max on every count (prune --keep 2**63 is an OverflowError "
    "inside SQLite, not a clean exit 2)",
)
def test_prune_keep_beyond_sqlite_integers_is_a_clean_refusal(tmp_path: Path) -> None:
    _register()
    env = {k: None for k in os.environ if k.startswith(("RAGSONDE_", "QDRANT_"))}
    env["RAGSONDE_HOME"] = str(tmp_path / "home")
    result = CliRunner().invoke(app, ["history", "prune", "--keep", str(2**63)], env=env)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
