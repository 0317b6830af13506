"""The error boundary, in one process through the SDK's in-memory client, with no model: every
failure is a tool error carrying a contract code, and the server answers the next call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from ragsonde.config import Settings
from ragsonde.mcp.roots import Roots
from ragsonde.mcp.server import build_server
from ragsonde.mcp.tools import Room
from ragsonde.workspace import Workspace
from tests.mcp_room.drive import error_code


def test_failures_are_tool_errors_and_the_next_call_answers(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()

    async def main() -> dict[str, Any]:
        with Workspace(Settings(home=tmp_path / "home", collection="docs")) as ws:
            server = build_server(Room(ws, roots=Roots([tmp_path / "root"])))
            async with Client(server) as client:
                return {
                    "missing": await client.call_tool("inspect_collection", {}),
                    "no_run": await client.call_tool("failing_queries", {"run": "abc"}),
                    "bad_type": await client.call_tool("history_list", {"limit": "ten"}),
                    "bad_value": await client.call_tool("history_list", {"limit": 0}),
                    "neither": await client.call_tool("evaluate", {}),
                    "unknown": await client.call_tool("no_such_tool", {}),
                    "history": await client.call_tool("history_list", {}),
                    "config": await client.call_tool("config", {}),
                }

    got = anyio.run(main)
    assert error_code(got["missing"]) == "COLLECTION_NOT_FOUND"
    for key in ("no_run", "bad_type", "bad_value", "neither", "unknown"):
        assert error_code(got[key]) == "VALIDATION_ERROR", key
    assert "limit" in got["bad_type"].structured_content["error"]["message"]
    assert not got["history"].is_error
    assert got["history"].structured_content["runs"] == []
    config = got["config"].structured_content
    assert config["allow_write"] is False and config["roots"] == [str(tmp_path / "root")]


def test_building_the_server_leaves_the_root_logger_alone(tmp_path: Path) -> None:
    """The SDK's server calls ``logging.basicConfig`` as it is built: under ``ragsonde serve`` every
    ragsonde log line then reached stderr twice. The application's logging is left as it was."""
    import logging

    root = logging.getLogger()
    saved_handlers, saved_level = root.handlers[:], root.level
    root.handlers[:] = []  # what basicConfig needs to act: a root with no handler
    root.setLevel(logging.ERROR)
    try:
        with Workspace(Settings(home=tmp_path / "home", collection="docs")) as ws:
            build_server(Room(ws, roots=Roots([tmp_path])))
        assert root.handlers == [] and root.level == logging.ERROR
    finally:
        root.handlers[:] = saved_handlers
        root.setLevel(saved_level)
