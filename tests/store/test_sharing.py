"""A long-lived store (a server's) and a writer process (an ingest) share one home: the server
releases idle shards and waits for a held lock, and reads what the writer wrote. Real processes."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # starts processes

#: Answers one count per line read on stdin, like a server answering requests.
SERVER = (
    "import sys\n"
    "from ragsonde.store.edge import EdgeStore\n"
    "idle = float(sys.argv[2]) if sys.argv[2] != 'none' else None\n"
    "s = EdgeStore(sys.argv[1], idle_release_s=idle, lock_wait_s=float(sys.argv[3]))\n"
    "for _ in sys.stdin:\n"
    "    try:\n"
    "        print(s.count('c'), flush=True)\n"
    "    except Exception as e:\n"
    "        print('ERR', e, flush=True)\n"
    "s.close()\n"
)
#: Writes n points, says so, then keeps the collection open for a while (an ingest).
WRITER = (
    "import sys, time\n"
    "from ragsonde.models.points import PointRecord\n"
    "from ragsonde.store.edge import EdgeStore\n"
    "s = EdgeStore(sys.argv[1])\n"
    "n = int(sys.argv[2])\n"
    "s.upsert('c', [PointRecord(id=str(i + 1), vector=[1.0, 0.0, 0.0], payload={}) "
    "for i in range(n)])\n"
    "print('written', flush=True)\n"
    "time.sleep(float(sys.argv[3]))\n"
    "s.close()\n"
)


class _Server:
    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.proc = proc

    def ask(self) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("count\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()


@pytest.fixture
def serve(home: Path) -> Iterator[object]:
    procs: list[subprocess.Popen[str]] = []

    def start(idle: float | None, wait: float) -> _Server:
        proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(home), str(idle or "none"), str(wait)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        return _Server(proc)

    yield start
    for proc in procs:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.wait(timeout=60)
        proc.stdout.close()


def _write(home: Path, n: int, hold_s: float = 0.0) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(home), str(n), str(hold_s)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_an_ingest_succeeds_while_the_server_idles_and_the_server_reads_it(home, serve):
    server = serve(0.3, 0.0)
    assert server.ask() == "0"
    time.sleep(1.0)  # idle: the server lets the shard go
    out, err = _write(home, 5).communicate(timeout=120)
    assert "written" in out, err
    assert server.ask() == "5"


def test_a_request_during_a_write_waits_for_it_instead_of_failing(home, serve):
    server = serve(0.3, 30.0)
    assert server.ask() == "0"
    time.sleep(1.0)
    writer = _write(home, 7, hold_s=1.5)
    assert writer.stdout is not None and writer.stdout.readline().strip() == "written"
    started = time.monotonic()
    assert server.ask() == "7"  # waited for the writer to close, then read its data
    assert time.monotonic() - started > 0.5
    writer.communicate(timeout=60)


def test_without_idle_release_the_server_holds_the_home(home, serve):
    server = serve(None, 0.0)
    assert server.ask() == "0"
    time.sleep(1.0)
    out, err = _write(home, 5).communicate(timeout=120)
    assert "written" not in out
    assert f"pid {server.proc.pid}" in err
