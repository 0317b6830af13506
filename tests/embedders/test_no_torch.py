"""The run-time commands never import torch: each runs in a fresh process whose import system
refuses torch, sentence-transformers and transformers, and checks ``sys.modules`` at exit."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

import ragsonde
from ragsonde.samples import robotics_benchmark, robotics_docs

pytestmark = pytest.mark.slow

BLOCKED = ("torch", "sentence_transformers", "transformers")

#: Runs ``ragsonde ARGS…`` with the heavy libraries refused at import.
RUNNER = f"""
import atexit, sys
BLOCKED = {BLOCKED!r}
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ImportError("refused at run time: " + name)
        return None
sys.meta_path.insert(0, Refuse())
@atexit.register
def _check():
    loaded = sorted(m for m in sys.modules if m.partition(".")[0] in BLOCKED)
    print("HEAVY-MODULES:" + ",".join(loaded), file=sys.stderr)
from ragsonde.cli import main
sys.argv = ["ragsonde", *sys.argv[1:]]
main()
"""


def _env(home: Path) -> dict[str, str]:
    src = str(Path(ragsonde.__file__).resolve().parents[1])
    return os.environ | {
        "PYTHONPATH": src,
        "RAGSONDE_HOME": str(home),
        "RAGSONDE_COLLECTION": "robots",
        "COLUMNS": "200",
    }


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, *args],
        env=_env(home),
        cwd=home.parent,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "HEAVY-MODULES:\n" in proc.stderr or proc.stderr.endswith("HEAVY-MODULES:"), proc.stderr
    return proc


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("notorch") / "store"
    out = _run(home, "ingest", str(robotics_docs()), "--json")
    report = json.loads(out.stdout)
    assert report["embedded"] > 0
    return home


def test_query_and_batch_without_torch(home):
    out = _run(home, "query", "how do I stop the battery catching fire?", "-k", "3")
    assert "model load" in out.stdout and "embed" in out.stdout
    resp = json.loads(_run(home, "query", "lidar laser distance", "--json").stdout)
    assert resp["status"] == "success" and resp["results"]
    assert resp["model"] == "local:sentence-transformers/all-MiniLM-L6-v2"
    batch = home.parent / "batch.jsonl"
    batch.write_text('{"query_text": "gyroscope drift"}\n{"query_text": "PID tuning"}\n')
    result = json.loads(_run(home, "batch", str(batch), "--json").stdout)
    assert [r["status"] for r in result["responses"]] == ["success", "success"]


def test_eval_without_torch(home):
    out = _run(home, "eval", str(robotics_benchmark()), "--json")
    report = json.loads(out.stdout)
    assert report["metrics"]["hit_rate@5"] >= 0.8


def test_serve_without_torch_reports_the_model_load(home):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-c", RUNNER, "serve", "--port", str(port), "--log-level", "warning"],
        env=_env(home),
        cwd=home.parent,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        ready = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                ready = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=5)
                break
            except httpx.TransportError:
                time.sleep(0.3)
        assert ready is not None and ready.status_code == 200, proc.poll()
        body = ready.json()
        assert body["model_loaded"] is True and body["model_load_ms"] > 0
        answer = httpx.post(
            f"http://127.0.0.1:{port}/v1/query", json={"query_text": "lidar"}, timeout=30
        ).json()
        assert answer["status"] == "success" and answer["results"]
    finally:
        proc.send_signal(signal.SIGINT)  # uvicorn re-raises it after shutdown: atexit runs
        _, err = proc.communicate(timeout=60)
    assert "HEAVY-MODULES:\n" in err or err.rstrip().endswith("HEAVY-MODULES:"), err[-2000:]
