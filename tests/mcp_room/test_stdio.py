"""``ragsonde mcp`` as a real process over stdio, driven by the SDK's own client
(``stdio_client`` + ``ClientSession``), on the sample collection ingested with the real model.

Oracles: the tool's declared outputSchema (jsonschema), ``ragsonde eval --json`` on the same
benchmark (the metrics must be the very same), the contract's error codes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, stdio_client

from tests.mcp_room.drive import Session, check_session, drive, error_code, server, valid

pytestmark = pytest.mark.slow  # starts processes that load the model


def test_stdio_server_answers_as_the_cli(
    sample_home: Path, bench_root: Path, cli_report: dict[str, Any]
) -> None:
    bench = bench_root / "small.jsonl"

    async def main() -> Session:
        async with (
            stdio_client(server(sample_home, bench_root)) as (read, write),
            ClientSession(read, write) as session,
        ):
            return await drive(session, bench, bench_root.parent / "outside" / "secret.jsonl")

    check_session(anyio.run(main), cli_report)


def test_allow_write_records_and_diffs(sample_home: Path, bench_root: Path, tmp_path: Path) -> None:
    """With --allow-write: ingest exists (destructive), evaluate records (not read-only), and
    history_diff says what changed between two recorded runs."""
    bench = bench_root / "small.jsonl"
    history = tmp_path / "history.sqlite"
    params = server(
        sample_home, bench_root, "--allow-write", env={"RAGSONDE_HISTORY": str(history)}
    )

    async def main() -> dict[str, Any]:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            first = await session.call_tool("evaluate", {"benchmark": str(bench)})
            second = await session.call_tool(
                "evaluate", {"benchmark": str(bench), "search": {"score_threshold": 0.45}}
            )
            listed = await session.call_tool("history_list", {})
            diff = await session.call_tool("history_diff", {"run_a": "last~1", "run_b": "last"})
            no_run = await session.call_tool("history_diff", {"run_a": "99"})
            failing = await session.call_tool("failing_queries", {"run": "last", "limit": 3})
            return {
                "tools": tools,
                "first": first,
                "second": second,
                "listed": listed,
                "diff": diff,
                "no_run": no_run,
                "failing": failing,
            }

    got = anyio.run(main)
    tools = got["tools"]
    assert tools["ingest"].annotations.read_only_hint is False
    assert tools["ingest"].annotations.destructive_hint is True
    assert tools["evaluate"].annotations.read_only_hint is False
    assert tools["search"].annotations.read_only_hint is True
    first = valid(got["first"], tools["evaluate"])
    second = valid(got["second"], tools["evaluate"])
    assert (first["history_run"], second["history_run"]) == (1, 2)
    runs = valid(got["listed"], tools["history_list"])["runs"]
    assert [r["run_id"] for r in runs] == [1, 2]
    diff = valid(got["diff"], tools["history_diff"])
    assert (diff["a"]["run_id"], diff["b"]["run_id"]) == (1, 2)
    assert any("score_threshold" in c["field"] for c in diff["changes"]), diff["changes"]
    assert error_code(got["no_run"]) == "VALIDATION_ERROR"
    worst = valid(got["failing"], tools["failing_queries"])
    assert worst["source"] == "last" and len(worst["queries"]) == 3
