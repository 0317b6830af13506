"""``ragsonde eval --mcp`` stops at once on SIGTERM mid-run, even when the signal lands inside the
event loop's own bookkeeping, as a real process with a real MCP server process behind it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import ROOT, home_env

pytestmark = pytest.mark.slow  # starts processes

#: An MCP search server with one tool and no model: the same two documents for every query.
SERVER = '''
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel


class Hit(BaseModel):
    doc_id: str
    score: float


class Hits(BaseModel):
    results: list[Hit]


server = MCPServer("fixed")


@server.tool()
def find(query: str, limit: int = 10) -> Hits:
    """The same two documents for every query."""
    return Hits(results=[Hit(doc_id="lidar", score=0.9), Hit(doc_id="slam", score=0.5)])


server.run("stdio")
'''

#: ``ragsonde eval --mcp`` as its command line runs it, with SIGTERM planted where the main
#: thread schedules a callback once the first tool call has its answer.
PLANTED = """
import asyncio, os, signal, sys, threading
import mcp

answered, fired = threading.Event(), threading.Event()
call_tool = mcp.ClientSession.call_tool

async def planted_call_tool(self, *args, **kwargs):
    try:
        return await call_tool(self, *args, **kwargs)
    finally:
        answered.set()

call_soon = asyncio.BaseEventLoop.call_soon

def planted_call_soon(self, *args, **kwargs):
    main = threading.current_thread() is threading.main_thread()
    if main and answered.is_set() and not fired.is_set():
        fired.set()
        os.kill(os.getpid(), signal.SIGTERM)
    return call_soon(self, *args, **kwargs)

mcp.ClientSession.call_tool = planted_call_tool
asyncio.BaseEventLoop.call_soon = planted_call_soon
sys.argv = ["ragsonde", *sys.argv[1:]]
from ragsonde.cli import main
main()
"""


def test_a_sigterm_mid_run_stops_eval_mcp_at_once(tmp_path: Path) -> None:
    """The command line's handler raised SystemExit inside the loop's ``call_soon``: the wake-up
    it scheduled was lost, and the shutdown waited for that task until SIGTERM_GRACE_S (10 s;
    11 s in three runs of three). The loop now takes SIGTERM itself and cancels the run."""
    from ragsonde.samples import robotics_benchmark

    server, planted = tmp_path / "server.py", tmp_path / "planted.py"
    server.write_text(SERVER, encoding="utf-8")
    planted.write_text(PLANTED, encoding="utf-8")
    args = ["eval", str(robotics_benchmark()), "--mcp", f"{sys.executable} {server}"]
    args += ["--tool", "find", "--k", "10", "--no-record", "--no-throughput"]
    started = time.monotonic()
    out = subprocess.run(
        [sys.executable, str(planted), *args],
        capture_output=True,
        text=True,
        env=home_env(tmp_path / "home"),
        cwd=ROOT,
        timeout=120,
    )
    took = time.monotonic() - started
    assert out.returncode == -signal.SIGTERM, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    assert out.stdout == ""  # no report from a run that was stopped
    assert took < 8, f"eval --mcp took {took:.1f} s to stop after SIGTERM"
