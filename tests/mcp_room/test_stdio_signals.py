"""``ragsonde mcp`` over stdio stops on Ctrl-C and on SIGTERM while its client keeps the pipe
open, idle or mid-request, as a real process on real pipes. It ignored both until the client
closed stdin: the thread reading the pipe could not be cancelled, and closing the reader waited
for it. A client that stops its server with SIGTERM (the MCP stdio transport's advice once closing
stdin is not enough) had to SIGKILL it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import MCP_INITIALIZE as INIT
from tests.support import ROOT, home_env

pytestmark = pytest.mark.slow  # a process that loads the model

SEARCH = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "search", "arguments": {"query": "lidar", "collection": "robotics"}},
}


def _send(proc: subprocess.Popen[bytes], frame: dict[str, object]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(frame).encode() + b"\n")
    proc.stdin.flush()


def _initialize(proc: subprocess.Popen[bytes]) -> None:
    """The MCP handshake over the server's pipes: initialize, its answer, initialized."""
    assert proc.stdout is not None
    _send(proc, INIT)
    assert json.loads(proc.stdout.readline())["id"] == 1
    _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # as from a terminal, whatever ran the tests


@pytest.mark.parametrize("busy", [False, True], ids=["idle", "mid-request"])
@pytest.mark.parametrize(
    ("sig", "code"),
    [(signal.SIGINT, 130), (signal.SIGTERM, -signal.SIGTERM)],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_signal_stops_the_server_while_the_client_holds_the_pipe(
    sample_home: Path, sig: signal.Signals, code: int, busy: bool
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragsonde", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # a hang is then shown: SIGABRT makes faulthandler print every thread's stack
        env={**home_env(sample_home), "PYTHONFAULTHANDLER": "1"},
        cwd=ROOT,
        preexec_fn=_default_sigint,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        _initialize(proc)
        if busy:
            _send(proc, SEARCH)
        proc.send_signal(sig)
        try:
            proc.wait(timeout=30)  # stdin stays open: only the signal can end it
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            _, stacks = proc.communicate(timeout=30)
            pytest.fail(
                f"ragsonde mcp ignored {sig.name} while the client held the pipe; its threads:\n"
                + stacks.decode(errors="replace")[-8000:]
            )
        err = proc.stderr.read().decode() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert proc.returncode == code, err
    assert "Traceback" not in err, err
    assert "Exception in callback" not in err, err  # asyncio's log of a signal it swallowed
    assert ("Interrupted (Ctrl-C)." in err) is (sig == signal.SIGINT), err


def test_a_sigterm_that_lands_in_an_event_loop_callback_still_stops_it() -> None:
    """The window the process test above hits only now and then (7 runs in 11 one evening, none
    in 13 the next hour; once in CI), made certain: the signal arrives while asyncio runs a
    callback, where it logs any exception but SystemExit and KeyboardInterrupt and carries on.
    ``ragsonde mcp`` then went on serving after SIGTERM."""
    import asyncio

    import anyio

    from ragsonde.cli import _on_sigterm

    async def serve() -> None:
        asyncio.get_running_loop().call_soon(os.kill, os.getpid(), signal.SIGTERM)
        await anyio.sleep(5)  # the server's idle wait: only the signal may end it early

    before = signal.signal(signal.SIGTERM, _on_sigterm)
    started = time.monotonic()
    try:
        with pytest.raises(SystemExit):
            anyio.run(serve)
    finally:
        signal.signal(signal.SIGTERM, before)
    assert time.monotonic() - started < 4


#: ``ragsonde mcp`` as its command line runs it, with SIGTERM planted where the main thread
#: wakes the search call's task: inside the ``call_soon`` that schedules the wake-up, once the
#: search's worker thread has its answer (``os.kill`` runs the handler before it returns).
_PLANTED = """
import asyncio, os, signal, sys, threading
from ragsonde.retriever import Retriever

answered = threading.Event()
retrieve = Retriever.retrieve

def planted_retrieve(self, *args, **kwargs):
    try:
        return retrieve(self, *args, **kwargs)
    finally:
        answered.set()

call_soon = asyncio.BaseEventLoop.call_soon

def planted_call_soon(self, *args, **kwargs):
    if answered.is_set() and threading.current_thread() is threading.main_thread():
        answered.clear()
        os.kill(os.getpid(), signal.SIGTERM)
    return call_soon(self, *args, **kwargs)

Retriever.retrieve = planted_retrieve
asyncio.BaseEventLoop.call_soon = planted_call_soon
sys.argv = ["ragsonde", "mcp"]
from ragsonde.cli import main
main()
"""


def test_a_sigterm_inside_the_loops_bookkeeping_stops_the_server_at_once(
    sample_home: Path, tmp_path: Path
) -> None:
    """SIGTERM mid-request that lands while the event loop schedules a task's wake-up. The
    command line's handler raised SystemExit right there: the wake-up was lost, the search
    call's task never ran again, and asyncio's shutdown waited for it for ever, anyio
    re-delivering its cancellation every turn of the loop, until SIGTERM_GRACE_S (10 s) ended
    the process. A process test hits that window now and then (CI once); here it is certain.
    The loop now takes SIGTERM itself, between two callbacks, and cancels the server."""
    script = tmp_path / "planted.py"
    script.write_text(_PLANTED, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**home_env(sample_home), "PYTHONFAULTHANDLER": "1"},
        cwd=ROOT,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        _initialize(proc)
        started = time.monotonic()
        _send(proc, SEARCH)
        code = proc.wait(timeout=30)  # stdin stays open: only the signal can end it
        took = time.monotonic() - started
        err = proc.stderr.read().decode() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert code == -signal.SIGTERM, err
    assert "Traceback" not in err, err
    assert took < 5, f"the server took {took:.1f} s to stop after SIGTERM"
