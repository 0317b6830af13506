"""``OTEL_TRACES_EXPORTER`` asks for traces: when ragsonde cannot export them (the exporter's
package is missing, or the exporter is not one it sets up) it says so on stderr, once per run,
instead of running without them in silence (an unknown name was taken for OTLP, too).

Oracle: the variable unset, or ``console``, gives no such line."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from tests.support import run

pytestmark = pytest.mark.slow  # a process per case

WARNING = "No traces will be exported"


def _stderr(tmp_path: Path, exporter: str | None) -> str:
    env = {"RAGSONDE_HOME": str(tmp_path / "home")}
    if exporter is not None:
        env["OTEL_TRACES_EXPORTER"] = exporter
    done = run("query", "lidar range", "-c", "nowhere", env=env)
    assert "COLLECTION_NOT_FOUND" in done.stderr, done.stderr  # it did try to retrieve
    return done.stderr


def test_an_exporter_that_cannot_be_set_up_is_said(tmp_path: Path) -> None:
    said = _stderr(tmp_path, "zipkin")
    assert WARNING in said and "to zipkin" in said
    assert WARNING not in _stderr(tmp_path, None)
    assert WARNING not in _stderr(tmp_path, "console")
    both = _stderr(tmp_path, "console,zipkin")  # a list: console is set up, zipkin is said
    assert both.count(WARNING) == 1 and "to zipkin" in both


def _otlp_installed() -> bool:
    try:
        return importlib.util.find_spec("opentelemetry.exporter.otlp.proto.http") is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


@pytest.mark.skipif(_otlp_installed(), reason="the OTLP exporter is installed: nothing to say")
def test_a_missing_otlp_exporter_is_said(tmp_path: Path) -> None:
    said = _stderr(tmp_path, "otlp")
    assert WARNING in said and "pip install opentelemetry-exporter-otlp-proto-http" in said


def test_an_exporter_asked_for_without_opentelemetry_is_said(tmp_path: Path) -> None:
    """Without the API installed, ``OTEL_TRACES_EXPORTER=console`` was ignored in silence."""
    blocker = tmp_path / "block" / "sitecustomize.py"
    blocker.parent.mkdir()
    blocker.write_text(
        "import sys\nsys.modules['opentelemetry'] = None  # as if it were not installed\n"
    )
    env = {
        "RAGSONDE_HOME": str(tmp_path / "home"),
        "OTEL_TRACES_EXPORTER": "console",
        "PYTHONPATH": os.pathsep.join(
            [str(blocker.parent), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
    }
    done = run("query", "lidar range", "-c", "nowhere", env=env)
    assert "COLLECTION_NOT_FOUND" in done.stderr, done.stderr
    assert done.stderr.count(WARNING) == 1 and "OpenTelemetry is not installed" in done.stderr
