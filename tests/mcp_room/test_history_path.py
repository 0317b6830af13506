"""The MCP history tools tell an absent history (no runs yet) from one that is there but
cannot be used: a folder where the file should be was listed as "no runs", silently; it is now
the history's own VALIDATION_ERROR naming the path, as every other surface gives it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from ragsonde.config import Settings
from ragsonde.mcp.roots import Roots
from ragsonde.mcp.server import build_server
from ragsonde.mcp.tools import Room
from ragsonde.workspace import Workspace
from tests.mcp_room.drive import error_code


def _calls(home: Path, root: Path) -> dict[str, Any]:
    async def main() -> dict[str, Any]:
        with Workspace(Settings(home=home, collection="docs")) as ws:
            server = build_server(Room(ws, roots=Roots([root])))
            async with Client(server) as client:
                return {
                    "list": await client.call_tool("history_list", {}),
                    "diff": await client.call_tool("history_diff", {}),
                }

    return anyio.run(main)


def test_a_history_path_that_is_a_folder_is_an_error_not_an_empty_history(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RAGSONDE_HISTORY", raising=False)
    home, root = tmp_path / "home", tmp_path / "root"
    root.mkdir()
    home.mkdir()
    absent = _calls(home, root)  # no history yet: no runs, and no error
    assert not absent["list"].is_error and absent["list"].structured_content["runs"] == []
    assert not (home / "history.sqlite").exists()  # listing made no file
    (home / "history.sqlite").mkdir()
    got = _calls(home, root)
    for name in ("list", "diff"):
        assert error_code(got[name]) == "VALIDATION_ERROR", name
        message = got[name].structured_content["error"]["message"]
        assert "history.sqlite" in message and "directory" in message, message
