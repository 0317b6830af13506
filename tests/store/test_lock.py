"""The Edge lock file holds a pid and a host, nothing from argv, with mode 0600; the contention
error names that pid and host and never a command line."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import portalocker
import pytest

from ragsonde.errors import StoreConnectionError
from ragsonde.store.edge import EdgeStore
from ragsonde.store.lock import LOCK_FILE
from tests.support import holding

SECRET = "sk-live-DO-NOT-LEAK-1234"


def _lock_file(home: Path) -> Path:
    return home / "collections" / "c" / LOCK_FILE


def test_lock_file_holds_pid_and_host_only_with_mode_0600(home):
    # the secret on the holder's command line, as ``ragsonde push --api-key …`` has it
    with holding(home, "c", "--api-key", SECRET) as holder:
        assert holder.stdin is not None
        path = _lock_file(home)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        content = path.read_text(encoding="utf-8")
        assert json.loads(content) == {"pid": holder.pid, "host": socket.gethostname()}
        assert SECRET not in content and "--api-key" not in content

        with pytest.raises(StoreConnectionError) as caught:
            EdgeStore(home).count("c")
        message = str(caught.value)
        assert f"pid {holder.pid} on host {socket.gethostname()}" in message
        assert SECRET not in message and "--api-key" not in message
        holder.stdin.close()
        assert holder.wait(timeout=60) == 0
    # after the holder exits the file is still private and still argv-free; the lock is free
    assert stat.S_IMODE(_lock_file(home).stat().st_mode) == 0o600
    assert SECRET not in _lock_file(home).read_text(encoding="utf-8")
    s = EdgeStore(home)
    assert s.count("c") == 0
    s.close()


def test_an_old_lock_file_is_tightened_and_its_contents_never_shown(home):
    """Older versions wrote the command line into a 0644 file; an old holder's file is not
    echoed, and the next owner rewrites it as 0600."""
    path = _lock_file(home)
    path.write_text(f"pid 1: ragsonde push --api-key {SECRET}", encoding="utf-8")
    os.chmod(path, 0o644)
    with path.open("r+", encoding="utf-8") as old_holder:
        portalocker.lock(old_holder, portalocker.LockFlags.EXCLUSIVE)
        with pytest.raises(StoreConnectionError, match="another process") as caught:
            EdgeStore(home).count("c")
        assert SECRET not in str(caught.value)
        portalocker.unlock(old_holder)
    s = EdgeStore(home)
    s.count("c")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text(encoding="utf-8"))["pid"] == os.getpid()
    s.close()


@pytest.mark.slow
def test_cli_commands_leave_no_argv_in_the_home(tmp_path):
    """A real ``ragsonde ingest`` whose command line carries a secret-looking value."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nLidar measures distance with laser pulses.\n")
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k != "QDRANT_URL"}
    env["RAGSONDE_HOME"] = str(home)
    out = subprocess.run(
        [sys.executable, "-m", "ragsonde", "ingest", str(docs), "-c", f"c{SECRET[-4:]}"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    locks = list(home.rglob(LOCK_FILE))
    assert locks
    for lock in locks:
        assert stat.S_IMODE(lock.stat().st_mode) == 0o600
        assert set(json.loads(lock.read_text(encoding="utf-8"))) == {"pid", "host"}
        assert "ingest" not in lock.read_text(encoding="utf-8")


def test_threads_opening_one_collection_at_once_release_its_lock_on_close(home):
    """Whoever opens a workspace closes it. Threads of one store that opened a collection at
    the same moment each counted a reference, but the store kept one: ``close`` released one,
    and the lock file stayed open and locked until the process ended (the test suite's
    ``ResourceWarning: unclosed file <_io.TextIOWrapper ... mode='r+'>`` at exit)."""
    import gc
    import threading
    import warnings

    from ragsonde.store.lock import lock_shard

    for _ in range(5):  # a race: a few rounds, each a fresh store
        store = EdgeStore(home)
        start = threading.Barrier(8)

        def count(s: EdgeStore = store, b: threading.Barrier = start) -> None:
            b.wait()
            s.count("c")

        threads = [threading.Thread(target=count) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            store.close()
            del store
            gc.collect()
        assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
        lock_shard("c", home / "collections" / "c").release()  # free: nobody holds it
