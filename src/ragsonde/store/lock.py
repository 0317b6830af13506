"""The lock file beside an embedded collection: one process opens a shard at a time.

``<collection>/.ragsonde.lock`` is locked with portalocker (an exclusive, non-blocking
``flock``), so the lock goes when the process does, however it ends. The file holds JSON with the
owner's ``pid`` and ``host`` and nothing else: no command line, which may carry an API key. It is
created with mode 0600 (and tightened to 0600 if an older one was wider). A second process gets a
CONNECTION_ERROR naming that pid and host.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ragsonde.errors import CollectionInUseError

__all__ = [
    "LOCK_FILE",
    "WANT_POLL_S",
    "YIELD_S",
    "ShardLock",
    "acquire_lock",
    "lock_shard",
    "wanted",
]

LOCK_FILE = ".ragsonde.lock"
_MODE = 0o600
_POLL_S = 0.05


@dataclass
class ShardLock:
    """A held lock; :meth:`release` unlocks and closes it (the file stays, unlocked)."""

    path: Path
    handle: IO[str]

    def release(self) -> None:
        import portalocker

        if not self.handle.closed:
            portalocker.unlock(self.handle)
            self.handle.close()


def _owner(handle: IO[str]) -> str:
    """Who holds the lock, from the file: only a pid and a host are ever shown."""
    handle.seek(0)
    try:
        data = json.loads(handle.read(4096) or "{}")
    except json.JSONDecodeError:
        data = {}
    pid = data.get("pid") if isinstance(data, dict) else None
    host = data.get("host") if isinstance(data, dict) else None
    if isinstance(pid, int) and isinstance(host, str):
        return f"pid {pid} on host {host}"
    return "another process"


def lock_shard(name: str, folder: Path, *, wait_s: float = 0.0) -> ShardLock:
    """Take the lock of collection ``name`` in ``folder`` (created if needed), waiting up to
    ``wait_s`` seconds for a holder to let go, or raise CollectionInUseError naming the holder."""
    import portalocker
    import portalocker.exceptions

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, _MODE)
    os.fchmod(fd, _MODE)
    handle = os.fdopen(fd, "r+", encoding="utf-8")
    flags = portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING
    deadline = time.monotonic() + wait_s
    while True:
        try:
            portalocker.lock(handle, flags)
            break
        except portalocker.exceptions.LockException as e:
            if time.monotonic() < deadline:
                time.sleep(_POLL_S)
                continue
            error = e
        owner = _owner(handle)
        handle.close()
        raise CollectionInUseError(
            f"Collection '{name}' at {folder} is held by another process ({owner}). Only one "
            "process can open an embedded collection at a time: stop that process, or send "
            "queries through it (`ragsonde serve` exposes an HTTP API), or use a Qdrant server "
            "(QDRANT_URL) for concurrent access.",
            holder=owner,
        ) from error
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname()}))
    handle.flush()
    return ShardLock(path, handle)


_WANT_PREFIX = ".ragsonde.want."
_WANT_FRESH_S = 2.0  # a want file not touched for this long is a waiter that died
WANT_POLL_S = 0.2
#: How long a holder that let go for a waiter leaves the lock to it before it retakes the lock
#: (the waiter polls every ``_POLL_S``; its want file goes once it holds the lock).
YIELD_S = 2.0


def acquire_lock(name: str, path: Path, wait_s: float = 0.0) -> ShardLock:
    """Take the shard's lock, waiting up to ``wait_s``. While it waits, it keeps a want file
    (``.ragsonde.want.<pid>``) fresh beside the lock, so a long-lived holder that queries all
    the time still lets go (see ``EdgeStore._reap_idle``) instead of starving the waiter."""
    if wait_s <= 0:
        return lock_shard(name, path)
    deadline = time.monotonic() + wait_s
    want = path / f"{_WANT_PREFIX}{os.getpid()}"
    try:
        while True:
            remaining = deadline - time.monotonic()
            try:
                return lock_shard(name, path, wait_s=max(0.0, min(remaining, WANT_POLL_S)))
            except CollectionInUseError:
                if remaining <= WANT_POLL_S:
                    raise
                want.touch(mode=0o600)
    finally:
        want.unlink(missing_ok=True)


def wanted(path: Path) -> bool:
    """Whether another process is waiting for this shard (a fresh want file not ours)."""
    mine = f"{_WANT_PREFIX}{os.getpid()}"
    now = time.time()
    try:
        for entry in os.scandir(path):
            if entry.name.startswith(_WANT_PREFIX) and entry.name != mine:
                with contextlib.suppress(OSError):
                    if now - entry.stat().st_mtime < _WANT_FRESH_S:
                        return True
    except OSError:
        return False
    return False
