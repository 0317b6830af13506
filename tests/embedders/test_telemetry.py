"""ONNX Runtime's telemetry stays off in ragsonde's processes unless the user turns it on.

ONNX Runtime 1.32 records telemetry on Linux when it loads a model: a device id and a queue of
events (the process's path, the OS, the CPU, whether it runs in a container) under
``~/.cache/Microsoft/DeveloperTools/.onnxruntime/``, and a session file ``.ses`` in the
temporary folder. Every ``ragsonde query`` wrote them. Oracle: the files themselves, in a HOME
and a TMPDIR of the test's own; ``ORT_DISABLE_TELEMETRY=0`` (the user's choice, kept) shows
the check sees them when they are written.

ONNX Runtime records nothing when it finds itself in a CI service (``CI``, ``GITHUB_ACTIONS``
and the others below, read from its library), so the children run without those variables, as
on a user's machine; otherwise the second test fails in CI and the first proves nothing there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import home_env

pytestmark = pytest.mark.slow  # a process that loads the model


def _query(sample_home: Path, root: Path, **env: str) -> tuple[Path, Path]:
    home, tmp = root / "home", root / "tmp"
    home.mkdir(parents=True)
    tmp.mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ragsonde",
            "query",
            "how do I calibrate the lidar?",
            "-c",
            "robotics",
        ],
        env={
            **_without_choice(home_env(sample_home)),
            "HOME": str(home),
            "TMPDIR": str(tmp),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return home, tmp


# The variables by which ONNX Runtime 1.32 knows it runs in CI (``strings`` of its library).
_CI_MARKERS = frozenset(
    {
        "CI",
        "TF_BUILD",
        "GITHUB_ACTIONS",
        "GITLAB_CI",
        "CIRCLECI",
        "TRAVIS",
        "JENKINS_URL",
        "CODEBUILD_BUILD_ID",
        "BUILDKITE",
        "TEAMCITY_VERSION",
        "APPVEYOR",
        "BITBUCKET_BUILD_NUMBER",
    }
)


def _without_choice(env: dict[str, str]) -> dict[str, str]:
    """``env`` without ``ORT_DISABLE_TELEMETRY`` (this test process set it when the fixtures
    loaded the model, and a child given it would prove nothing) and without the CI markers."""
    return {k: v for k, v in env.items() if k != "ORT_DISABLE_TELEMETRY" and k not in _CI_MARKERS}


def _written(home: Path, tmp: Path) -> list[str]:
    return sorted(
        [p.name for p in tmp.iterdir()]
        + [str(p.relative_to(home)) for p in home.rglob("*") if "Microsoft" in p.parts]
    )


def test_a_query_leaves_no_onnxruntime_telemetry(sample_home: Path, tmp_path: Path) -> None:
    home, tmp = _query(sample_home, tmp_path / "off")
    assert _written(home, tmp) == []


def test_the_users_own_choice_is_kept(sample_home: Path, tmp_path: Path) -> None:
    home, tmp = _query(sample_home, tmp_path / "on", ORT_DISABLE_TELEMETRY="0")
    written = _written(home, tmp)
    assert ".ses" in written
    assert ".cache/Microsoft/DeveloperTools/.onnxruntime/deviceid" in written
