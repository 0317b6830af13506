"""Two ``ragsonde`` processes writing the same thing at once, and Ctrl-C mid-way: nothing is lost,
nothing is half-written, and the loser says why. Real processes on a real embedded store."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from ragsonde.store.edge import EdgeStore
from ragsonde.store.lock import lock_shard
from tests.support import ROOT, home_env

pytestmark = pytest.mark.slow  # starts processes

PAGES = {
    "lidar.md": "# Lidar\n\nLidar measures distance by timing laser pulses off surfaces.\n",
    "sonar.md": "# Sonar\n\nUltrasonic rangefinders emit sound pulses and listen for the echo.\n",
    "imu.md": "# IMU\n\nAn IMU combines accelerometers and gyroscopes to track heading.\n",
}


def _pages(folder: Path) -> Path:
    folder.mkdir()
    for name, text in PAGES.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def _start(home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "ragsonde", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=home_env(home),
        cwd=ROOT,
    )


def _wait_for(what: str, done: object, procs: list[subprocess.Popen[str]]) -> None:
    deadline = time.monotonic() + 60
    while not callable(done) or not done():
        for p in procs:
            if p.poll() is not None:
                out, err = p.communicate()
                raise AssertionError(f"exited {p.returncode} before {what}: {out}{err}")
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.05)


def test_two_ingests_creating_one_collection_at_once_both_succeed(tmp_path: Path) -> None:
    """The second to create a collection waits for the first and then writes into the one it
    made; before, it failed at once with CONNECTION_ERROR (the lock held by the creator), and
    after a wait it would have created the shard a second time over the first one."""
    home, pages = tmp_path / "home", _pages(tmp_path / "pages")
    folder = home / "collections" / "docs"
    # A creator holds the new collection's lock while both ingests arrive: they must wait.
    creator = lock_shard("docs", folder)
    procs = [_start(home, "ingest", str(pages), "-c", "docs") for _ in range(2)]
    try:
        _wait_for(
            "both ingests waited for the lock",
            lambda: all((folder / f".ragsonde.want.{p.pid}").exists() for p in procs),
            procs,
        )
        creator.release()
        results = [p.communicate(timeout=120) for p in procs]
    finally:
        creator.release()
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    for p, (out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0, out + err
        assert "Ingested 3 documents" in out, out
    store = EdgeStore(home)
    try:
        stored = [p for batch in store.scroll("docs") for p in batch]
    finally:
        store.close()
    assert sorted(p.payload["doc_id"] for p in stored) == sorted(n[:-3] for n in PAGES)
