"""``history export -o -`` writes standard output, as the option's default does: it wrote a
file named ``-`` in the working folder, and said "exported 1 run(s) to -"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.history.support import Story
from tests.support import home_env

pytestmark = pytest.mark.slow  # processes (and the story's model)


def _export(story: Story, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "ragsonde",
            "history",
            "export",
            "--history",
            str(story.history),
            *args,
        ],
        capture_output=True,
        text=True,
        env=home_env(story.home),
        timeout=120,
        cwd=cwd,
    )


def test_export_to_dash_is_standard_output(story: Story, tmp_path: Path) -> None:
    default = _export(story, tmp_path)
    dash = _export(story, tmp_path, "-o", "-")
    assert default.returncode == 0 and dash.returncode == 0, dash.stderr
    lines = dash.stdout.splitlines()
    assert len(lines) == len(story.runs) and dash.stdout == default.stdout
    assert list(tmp_path.iterdir()) == [], "a file was written in the working folder"
