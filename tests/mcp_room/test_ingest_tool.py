"""The ``ingest`` tool (``--allow-write``) in one process through the SDK's in-memory client, with
the real model and the embedded store: its summary counts a chunk whose payload alone changed as
``rewritten``, as ``ragsonde ingest --json`` does, within the tool's declared output schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import jsonschema
from mcp import Client

from ragsonde.config import Settings
from ragsonde.mcp.roots import Roots
from ragsonde.mcp.server import build_server
from ragsonde.mcp.tools import Room
from ragsonde.workspace import Workspace


def test_the_ingest_tool_counts_a_payload_only_change_as_rewritten(
    tmp_path: Path, embedder: Any
) -> None:
    root = tmp_path / "root"
    (root / "docs").mkdir(parents=True)
    page = root / "docs" / "lidar.md"
    page.write_text("---\nowner: perception\n---\n# Lidar\n\nLidar times laser pulses.\n")

    async def main() -> list[Any]:
        settings = Settings(home=tmp_path / "home", collection="docs")
        with Workspace(settings, embedder=embedder) as ws:
            server = build_server(Room(ws, roots=Roots([root]), allow_write=True))
            async with Client(server) as client:
                [tool] = [t for t in (await client.list_tools()).tools if t.name == "ingest"]
                out = [tool.output_schema]
                for owner in ("perception", "perception", "platform"):
                    page.write_text(page.read_text().replace("perception", owner))
                    got = await client.call_tool("ingest", {"source": str(root / "docs")})
                    assert not got.is_error, got
                    out.append(got.structured_content)
                return out

    schema, first, again, edited = anyio.run(main)
    for summary in (first, again, edited):
        jsonschema.validate(summary, schema)
    counts = [(s["embedded"], s["rewritten"], s["skipped"]) for s in (first, again, edited)]
    assert counts == [(1, 0, 0), (0, 0, 1), (0, 1, 0)]
