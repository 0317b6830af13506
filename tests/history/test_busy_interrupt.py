"""Ctrl-C while another process holds the history is seen at once, not after the 30 s wait.

SQLite's busy handler sleeps in C, so Python's signal handler could not run until it gave up:
``history prune`` against a history another process was writing exited 30 s after Ctrl-C. It
now waits in short steps, and the wait itself still lasts as long (a writer that finishes in
time is waited for)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import ROOT, holding

pytestmark = pytest.mark.slow

_HOLD = (
    "import sqlite3, sys\n"
    "d = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
    "d.execute('BEGIN IMMEDIATE')\n"
    "print('held', flush=True)\n"
    "sys.stdin.read()\n"
    "d.execute('COMMIT')\n"
)


def _history(path: Path) -> None:
    from ragsonde.history import HistoryStore

    HistoryStore(path).close()
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def _prune(path: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ragsonde",
            "history",
            "prune",
            "--keep",
            "5",
            "--history",
            str(path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def test_ctrl_c_while_the_history_is_held_stops_at_once(tmp_path: Path) -> None:
    history = tmp_path / "history.sqlite"
    _history(history)
    with holding(history, "", script=_HOLD) as holder:  # argv[1]: the history
        assert holder.stdin is not None
        prune = _prune(history)
        time.sleep(4)  # started, and waiting for the holder
        assert prune.poll() is None
        sent = time.monotonic()
        prune.send_signal(signal.SIGINT)
        _, err = prune.communicate(timeout=60)
        waited = time.monotonic() - sent
        assert prune.returncode == 130 and "Interrupted (Ctrl-C)." in err, err
        assert waited < 10, f"{waited:.1f} s after Ctrl-C"  # was the rest of 30 s
        # a writer that lets go in time is waited for, not refused
        prune = _prune(history)
        time.sleep(3)
        holder.stdin.close()
        _, err = prune.communicate(timeout=60)
        assert prune.returncode == 0, err
