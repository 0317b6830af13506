"""``ragsonde mcp`` over stdio answers every request it cannot read, as a real process on real
pipes: a lone surrogate escaped in the JSON, bytes that are not UTF-8, a line that is no JSON.
The SDK's reader alone logged such a frame and never answered it, so the client waited for
ever; the server stays up and answers the next request either way.

Written raw (the SDK's client cannot send these frames: that is the point). Oracles: JSON-RPC
2.0 (an error to the request's id, or to id null when it has none; none for a notification)
and the contract's VALIDATION_ERROR."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ragsonde.mcp.stdio import answer_for
from tests.support import MCP_INITIALIZE as INIT
from tests.support import ROOT, home_env

pytestmark = pytest.mark.slow  # a process that loads the model

#: A search whose query holds a lone surrogate, escaped: valid UTF-8, valid to Python's json.
SURROGATE = (
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call",'
    b'"params":{"name":"search","arguments":{"query":"caf\\udc80","collection":"robotics"}}}'
)
#: The same search with a Latin-1 byte in its query: not UTF-8.
LATIN1 = (
    b'{"jsonrpc":"2.0","id":"three","method":"tools/call",'
    b'"params":{"name":"search","arguments":{"query":"caf\xe9","collection":"robotics"}}}'
)


def _answer(proc: subprocess.Popen[bytes], timeout: float = 60) -> dict[str, Any]:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    assert ready, "no answer: the client would wait for ever"
    answer: dict[str, Any] = json.loads(proc.stdout.readline())
    return answer


class _Server:
    """``ragsonde mcp ARGS`` as a real process on real pipes, initialised: ``send`` a raw
    frame, read the next ``answer``."""

    def __init__(self, home: Path, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ragsonde", "mcp", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=home_env(home),
            cwd=ROOT,
        )
        try:
            self.send(json.dumps(INIT).encode())
            assert self.answer()["id"] == 1
            self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        except BaseException:
            self.kill()
            raise

    def send(self, frame: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame + b"\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        return _answer(self.proc)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.communicate()


def test_unreadable_requests_are_answered_and_the_server_goes_on(sample_home: Path) -> None:
    server = _Server(sample_home)
    send = server.send
    try:
        send(SURROGATE)
        surrogate = server.answer()
        assert surrogate["id"] == 2 and surrogate["error"]["code"] == -32602
        assert surrogate["error"]["message"].startswith("VALIDATION_ERROR")
        assert "surrogate" in surrogate["error"]["message"]
        send(LATIN1)
        latin1 = server.answer()
        assert latin1["id"] == "three" and "not UTF-8" in latin1["error"]["message"]
        send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":"\\udc80"}')
        send(b"hello, is this the MCP server?")
        garbage = server.answer()  # the notification above got no answer: this is the next line
        assert garbage["id"] is None and garbage["error"]["code"] == -32700
        send(json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}).encode())
        listed = server.answer()
        assert listed["id"] == 4 and any(t["name"] == "search" for t in listed["result"]["tools"])
        send(json.dumps({
            "jsonrpc": "2.0", "id": 5, "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "lidar", "collection": "robotics"}},
        }).encode())  # fmt: skip
        found = server.answer()  # a readable search still runs, on the text as sent
        assert found["id"] == 5 and found["result"]["structuredContent"]["results"]
    finally:
        server.kill()


def test_a_readable_line_goes_to_the_sdk_unchanged() -> None:
    line = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
    assert answer_for(line.encode()) == (line, None)
    assert answer_for(b"   \n") == (None, None)
    # an unreadable notification: JSON-RPC answers none
    assert answer_for(b'{"jsonrpc":"2.0","method":"x","params":"\\udc80"}') == (None, None)
    # unreadable, and its id is no id (a list): invalid request, to id null
    text, error = answer_for(b'{"jsonrpc":"2.0","id":[1],"method":"tools/list","params":"\\udc80"}')
    assert text is None and error is not None
    assert error["id"] is None and error["error"]["code"] == -32600


#: Valid JSON no reader here takes: nested 20,000 deep (the SDK's parser refuses it, and
#: Python's fallback reader, looking for the id, raised RecursionError out of the stdin task:
#: the server ended on one line), and an integer of 5,000 digits (over Python's int limit too:
#: answered to id null, so the client waited for ever).
DEEP = (
    b'{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"search",'
    b'"arguments":{"query":"x","filters":' + b'{"a":' * 20_000 + b"1" + b"}" * 20_000 + b"}}}"
)
HUGE = (
    b'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search",'
    b'"arguments":{"query":"x","top_k":' + b"9" * 5000 + b"}}}"
)
DEEP_NOTE = (
    b'{"jsonrpc":"2.0","method":"notifications/x","params":' + b"[" * 50_000 + b"]" * 50_000 + b"}"
)


def test_frames_too_deep_or_too_long_for_any_reader_are_answered_to_their_id(
    sample_home: Path,
) -> None:
    server = _Server(sample_home, "--collection", "robotics")
    send = server.send
    try:
        send(DEEP_NOTE)  # a notification: no answer, and the server goes on
        for frame, rid, said in ((DEEP, "deep", "recursion"), (HUGE, 6, "number")):
            send(frame)
            got = server.answer()
            assert got["id"] == rid and got["error"]["code"] == -32602, got
            assert got["error"]["message"].startswith("VALIDATION_ERROR"), got
            assert said in got["error"]["message"], got
        send(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}).encode())
        assert server.answer()["id"] == 7  # still serving
    finally:
        server.kill()


@pytest.mark.parametrize("rid", [b'{"a":1}', b"true", b"1.5", b"null", b"[2]"])
def test_a_request_whose_id_is_no_string_or_integer_is_answered(rid: bytes) -> None:
    # the SDK read it as a notification (its id dropped) and answered nothing: the client
    # waited for ever. MCP ids are strings or integers; JSON-RPC: Invalid Request to id null.
    text, error = answer_for(b'{"jsonrpc":"2.0","id":' + rid + b',"method":"tools/list"}')
    assert text is None and error is not None
    assert error["id"] is None and error["error"]["code"] == -32600
    assert error["error"]["message"].startswith("VALIDATION_ERROR")
    note = b'{"jsonrpc":"2.0","method":"notifications/initialized","params":{"id":1}}'
    assert answer_for(note) == (note.decode(), None)  # an id below the top level is no id
