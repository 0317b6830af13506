"""``ragsonde traffic`` stopped by a signal while it holds its spool (every query's row past
the first 5,000, in a temporary file): the file goes with the process.

SIGTERM (a CI timeout, ``kill``, a container stopping) ends the process as the signal says,
after the command's cleanup; a report's spool was deleted only when the report was collected,
which a process ended by its signal never does, so each stopped run left its rows in /tmp.
The command is stopped while it streams ``--json`` into a pipe nobody reads: past the replay,
with the report (and its spool) in hand."""

from __future__ import annotations

import json
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import SCIFACT, home_env

pytestmark = pytest.mark.slow  # the model, a process, 5,001 queries replayed

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _log(path: Path, n: int) -> None:
    """``n`` distinct questions: sentences of SciFact's corpus."""
    seen: dict[str, None] = {}
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            for s in _SENTENCE.split(json.loads(line)["text"]):
                if 6 <= len(s.split()) <= 40:
                    seen.setdefault(s.strip(), None)
            if len(seen) >= n:
                break
    rows = [{"query": q} for q in list(seen)[:n]]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_while_the_report_is_written_takes_its_spool_with_it(
    sample_home: Path, scifact_dir: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    log, tmp = tmp_path / "chat.jsonl", tmp_path / "tmp"
    tmp.mkdir()
    _log(log, 5_001)  # one past what a report holds in memory (traffic.run.IN_MEMORY)
    env = {**home_env(sample_home), "TMPDIR": str(tmp)}
    args = ["traffic", str(log), "-c", "robotics", "--no-record", "--json"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragsonde", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        assert proc.stdout is not None
        # the JSON has begun: the replay is done and the spool holds the rows; unread, the pipe
        # fills and the command waits in its write
        ready, _, _ = select.select([proc.stdout], [], [], 600)
        assert ready, "no JSON within 10 minutes"
        spools = list(tmp.glob("ragsonde-traffic-*"))
        assert len(spools) == 1, spools
        time.sleep(0.5)
        proc.send_signal(sig)
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
    assert code == (-sig if sig == signal.SIGTERM else 130)
    assert list(tmp.iterdir()) == []
