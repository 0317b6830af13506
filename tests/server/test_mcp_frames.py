"""``/mcp`` of a real ``ragsonde serve`` answers the frames the SDK's HTTP transport could not,
as ``ragsonde mcp`` over stdio does (tests/mcp_room/test_stdio_frames.py): a request whose id is
no string or integer got ``202 Accepted`` as a notification, and its client waited for ever
for the answer; a frame nested too deeply got -32700 to id null. Raw JSON-RPC over httpx: the
SDK's client cannot send these frames.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.support import MCP_INITIALIZE

pytestmark = pytest.mark.slow  # the real model behind a real server

ACCEPT = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@pytest.fixture
def session(base_url) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=60) as client:
        r = client.post("/mcp", headers=ACCEPT, json=MCP_INITIALIZE)
        assert r.status_code == 200, r.text
        version = MCP_INITIALIZE["params"]["protocolVersion"]
        client.headers.update({**ACCEPT, "mcp-protocol-version": version})
        if r.headers.get("mcp-session-id"):
            client.headers["mcp-session-id"] = r.headers["mcp-session-id"]
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert client.post("/mcp", json=note).status_code == 202
        yield client


@pytest.mark.parametrize("rid", ["true", "1.5", "null", '{"a": 1}'])
def test_a_request_whose_id_is_no_string_or_integer_is_answered(session, rid):
    frame = '{"jsonrpc": "2.0", "id": ' + rid + ', "method": "tools/list"}'
    r = session.post("/mcp", content=frame)
    assert r.status_code == 400, (r.status_code, r.text)
    answer = r.json()
    assert answer["id"] is None and answer["error"]["code"] == -32600
    assert answer["error"]["message"].startswith("VALIDATION_ERROR")
    listed = session.post("/mcp", json={"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
    assert listed.status_code == 200 and "search" in listed.text


def test_a_frame_too_deep_is_answered_to_its_id(session):
    deep = '{"a":' + "[" * 6000 + "]" * 6000 + "}"  # within the test server's 16 kB limit
    frame = '{"jsonrpc":"2.0","id":"d1","method":"tools/call","params":' + deep + "}"
    r = session.post("/mcp", content=frame)
    assert r.status_code == 400 and r.json()["id"] == "d1", r.text
    assert r.json()["error"]["code"] == -32602
    assert json.loads(session.get("/healthz").text)["status"] == "ok"
