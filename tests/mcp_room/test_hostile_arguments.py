"""``ragsonde mcp`` over stdio, called as a careless or hostile agent would, through the SDK's own
client: every answer is a tool error naming the argument with the contract's code, and the server
answers the next call.

Found by attacking the real server (each was an answer, not an error, before):

- an argument the tool does not declare was dropped without a word: ``history_diff`` called
  with ``a``/``b`` (its arguments are ``run_a``/``run_b``) diffed ``last~1`` with ``last``;
- JSON ``true`` was read as 1 (``score_threshold: true``: a threshold of 1.0 and no results;
  ``top_k: true``: one result), ``"yes"`` as ``True``, in the arguments and the ``search`` block;
- ``evaluate`` with ``benchmark: ""`` failed on an assert, a 10 kB name on the file system's
  ENAMETOOLONG and ``~nosuchuser/…`` on a RuntimeError: three CONNECTION_ERRORs ("failed
  unexpectedly") for a client's bad path;
- ``collection: ""`` was the default collection (``inspect_collection``, ``search``);
- a report resource of an id that names nothing (``ragsonde://reports/-1``, a 10 kB id,
  ``ragsonde://runs/nope``) was answered -32603 "Error creating resource from template" and
  logged as a crash: now -32602 with the contract's code and message, as the stdio frames are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, MCPError, stdio_client
from mcp.types import CallToolResult

from tests.mcp_room.drive import QUESTION, error_code, server

pytestmark = pytest.mark.slow  # a process that loads the model

ROW = {"query_id": "q1", "query": QUESTION, "relevant": ["lidar"]}
#: (tool, arguments, the argument the error must name)
HOSTILE: list[tuple[str, dict[str, Any], str]] = [
    ("search", {"query": QUESTION, "top_k": True}, "top_k"),
    ("search", {"query": QUESTION, "score_threshold": True}, "score_threshold"),
    ("search", {"query": QUESTION, "include_metadata": "yes"}, "include_metadata"),
    ("search", {"query": QUESTION, "search": {"score_threshold": True}}, "search.score_threshold"),
    ("search", {"query": QUESTION, "search": {"exact": "yes"}}, "search.exact"),
    ("search", {"query": QUESTION, "colection": "robotics"}, "colection"),
    ("history_diff", {"a": "last", "b": "last~1"}, "a"),
    ("history_list", {"limit": True}, "limit"),
    ("evaluate", {"rows": [ROW], "k": [True]}, "k"),
    ("evaluate", {"rows": [ROW], "search": {"top_k": "3"}}, "search.top_k"),
    ("evaluate", {"benchmark": ""}, "benchmark"),
    ("evaluate", {"benchmark": "x" * 10_000}, "benchmark"),
    ("evaluate", {"benchmark": "~no-such-user-ragsonde/b.jsonl"}, "benchmark"),
    ("explain_miss", {"benchmark": "y" * 10_000, "query_id": "q1"}, "benchmark"),
    ("inspect_collection", {"collection": ""}, "collection"),
    ("search", {"query": QUESTION, "collection": ""}, "collection"),
]
#: Resources whose id names no report: (uri, what the message must hold)
#: Each unknown id, as the refusal names it: a report id is looked up among the recorded runs
#: too, so its words depend on whether the home has a history yet ("no report '-1' … and no
#: run history", or the history's "bad run '-1'"); the session's other tests may have made one.
NO_REPORT = [
    ("ragsonde://reports/-1", "'-1'"),
    ("ragsonde://reports/" + "z" * 10_000, "'zzz"),
    ("ragsonde://runs/nope", "no evaluation 'nope'"),
]


def test_hostile_arguments_are_tool_errors_and_the_server_keeps_serving(
    sample_home: Path, bench_root: Path
) -> None:
    async def main() -> tuple[dict[str, Any], list[CallToolResult], CallToolResult]:
        async with (
            stdio_client(server(sample_home, bench_root)) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            schemas = {t.name: t.input_schema for t in (await session.list_tools()).tools}
            answers = [await session.call_tool(tool, args) for tool, args, _ in HOSTILE]
            for uri, _ in NO_REPORT:
                try:
                    await session.read_resource(uri)
                except MCPError as e:
                    refused.append(e)
            after = await session.call_tool("search", {"query": QUESTION, "top_k": 2.0})
            return schemas, answers, after

    refused: list[MCPError] = []
    schemas, answers, after = anyio.run(main)
    assert len(refused) == len(NO_REPORT)
    for (uri, said), err in zip(NO_REPORT, refused, strict=True):
        assert err.code == -32602 and err.message.startswith("VALIDATION_ERROR: "), uri[:60]
        assert said in err.message, err.message
    for (tool, args, field), res in zip(HOSTILE, answers, strict=True):
        shown = f"{tool} {str(args)[:80]}"
        assert error_code(res) == "VALIDATION_ERROR", (shown, res.structured_content)
        assert res.structured_content is not None
        assert field in res.structured_content["error"]["message"], shown
    assert not after.is_error and after.structured_content is not None
    assert len(after.structured_content["results"]) == 2
    # the published schemas say what the server now does
    assert all(s.get("additionalProperties") is False for s in schemas.values()), schemas
