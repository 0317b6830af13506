"""``ragsonde mcp`` among other processes on one home, through the SDK's stdio client: two
servers take turns on a collection, a collection another process holds is a CONNECTION_ERROR
naming the holder (and the next call after it lets go answers), and a client that closes stdin
in the middle of a call ends the server cleanly. Nothing needed fixing here; these keep it so.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, stdio_client

from tests.mcp_room.drive import QUESTION, error_code, server
from tests.support import MCP_INITIALIZE, home_env

pytestmark = pytest.mark.slow  # processes that load the model

ROW = {"query_id": "q1", "query": QUESTION, "relevant": ["lidar"]}
CALLS = [
    ("search", {"query": QUESTION, "top_k": 2}),
    ("inspect_collection", {}),
    ("evaluate", {"rows": [ROW], "k": [1, 5]}),
]


def test_two_servers_on_one_home_take_turns(sample_home: Path, bench_root: Path) -> None:
    answered: list[tuple[str, str, bool]] = []
    ready: list[str] = []

    async def client(name: str) -> None:
        async with (
            stdio_client(server(sample_home, bench_root)) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            ready.append(name)
            while len(ready) < 2:  # both up before either calls: they contend
                await anyio.sleep(0.05)
            for i in range(12):
                tool, args = CALLS[i % len(CALLS)]
                res = await session.call_tool(tool, args)
                answered.append((name, tool, bool(res.is_error)))

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(client, "a")
            tg.start_soon(client, "b")

    anyio.run(main)
    assert len(answered) == 24
    assert not [a for a in answered if a[2]], answered


def test_a_held_collection_is_a_connection_error_naming_the_holder(
    sample_home: Path, bench_root: Path
) -> None:
    lock_path = sample_home / "collections" / "robotics" / ".ragsonde.lock"

    async def main() -> dict[str, Any]:
        params = server(sample_home, bench_root, env={"RAGSONDE_LOCK_WAIT_S": "1"})
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            out: dict[str, Any] = {"free": await session.call_tool("search", {"query": QUESTION})}
            await anyio.sleep(3)  # past the server's idle release: it let go of the collection
            with lock_path.open("a+") as held:
                fcntl.flock(held, fcntl.LOCK_EX)  # another process's hold, as the store writes it
                held.seek(0)
                held.truncate()
                held.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname()}))
                held.flush()
                out["held"] = await session.call_tool("search", {"query": QUESTION})
                out["held_inspect"] = await session.call_tool("inspect_collection", {})
            out["after"] = await session.call_tool("search", {"query": QUESTION})
            return out

    got = anyio.run(main)
    assert not got["free"].is_error
    for key in ("held", "held_inspect"):
        assert error_code(got[key]) == "CONNECTION_ERROR", got[key].structured_content
        message = got[key].structured_content["error"]["message"]
        assert f"pid {os.getpid()} on host {socket.gethostname()}" in message, message
    assert not got["after"].is_error and got["after"].structured_content["results"]


@pytest.mark.parametrize("call", [CALLS[0], ("evaluate", {"benchmark": "small.jsonl"})])
def test_stdin_closed_in_the_middle_of_a_call_ends_the_server(
    sample_home: Path, bench_root: Path, call: tuple[str, dict[str, Any]]
) -> None:
    args = ["-m", "ragsonde", "mcp", "--collection", "robotics", "--root", str(bench_root)]
    proc = subprocess.Popen(
        [sys.executable, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=home_env(sample_home),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(json.dumps(MCP_INITIALIZE).encode() + b"\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 1
    tool, arguments = call
    request = {"name": tool, "arguments": arguments}
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    proc.stdin.write(
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": request}).encode()
        + b"\n"
    )
    proc.stdin.flush()
    time.sleep(0.2)  # the call is under way
    proc.stdin.close()
    try:
        code = proc.wait(timeout=60)  # a guard against a hang, not a speed figure
    finally:
        proc.kill()
        assert proc.stderr is not None
        stderr = proc.stderr.read().decode(errors="replace")
        proc.stdout.close()
        proc.stderr.close()
    assert code == 0, stderr[-2000:]
    assert "Traceback" not in stderr, stderr[-2000:]
