"""One session's worth of calls to a ragsonde MCP server, through the SDK's own client, and the
checks every transport must pass (stdio: test_stdio; streamable HTTP: test_http)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.types import CallToolResult, TextResourceContents, Tool

from tests.support import home_env

#: Every tool of a read-only server.
READ_TOOLS = {
    "search",
    "evaluate",
    "explain_miss",
    "failing_queries",
    "history_list",
    "history_diff",
    "inspect_collection",
    "config",
}
KS = [1, 3, 5, 10]
QUESTION = "how does a laser rangefinder measure distance"


@dataclass
class Session:
    """What a session answered, by check."""

    tools: dict[str, Tool] = field(default_factory=dict)
    calls: dict[str, CallToolResult] = field(default_factory=dict)
    progress: list[tuple[float, float | None]] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)
    run_file: str = ""


async def drive(session: ClientSession, bench: Path, outside: Path) -> Session:
    """List the tools, search, evaluate ``bench`` (with progress), read its report, explain a
    query, list its worst queries, and make the calls that must fail, interleaved with good
    ones (one failing call must not affect the next)."""
    out = Session()
    await session.initialize()
    listed = await session.list_tools()
    out.tools = {t.name: t for t in listed.tools}

    async def call(key: str, tool: str, args: dict[str, Any], **kw: Any) -> CallToolResult:
        out.calls[key] = await session.call_tool(tool, args, **kw)
        return out.calls[key]

    await call("search", "search", {"query": QUESTION, "top_k": 3})
    await call("bad_collection", "search", {"query": QUESTION, "collection": "no_such"})
    await call("bad_top_k_type", "search", {"query": QUESTION, "top_k": "many"})
    await call("bad_top_k", "search", {"query": QUESTION, "top_k": 0})
    await call("search_after_errors", "search", {"query": QUESTION, "top_k": 3})
    await call("outside_roots", "evaluate", {"benchmark": str(outside)})
    await call("traversal", "evaluate", {"benchmark": f"../{outside.parent.name}/{outside.name}"})

    async def progress(done: float, total: float | None, message: str | None) -> None:
        out.progress.append((done, total))

    res = await call(
        "evaluate", "evaluate", {"benchmark": str(bench), "k": KS}, progress_callback=progress
    )
    if not res.is_error and res.structured_content is not None:
        summary = res.structured_content
        got = await session.read_resource(summary["report_uri"])
        first = got.contents[0]
        assert isinstance(first, TextResourceContents)
        out.report = json.loads(first.text)
        run = (await session.read_resource(summary["run_uri"])).contents[0]
        assert isinstance(run, TextResourceContents)
        out.run_file = run.text
        await call("failing", "failing_queries", {"run": summary["report_id"], "metric": "ndcg@10"})
        worst = (out.calls["failing"].structured_content or {}).get("queries") or [{}]
        qid = worst[0].get("query_id", "q01")
        await call("explain", "explain_miss", {"benchmark": str(bench), "query_id": qid})
    rows = [json.loads(line) for line in bench.read_text(encoding="utf-8").splitlines()]
    await call("inline", "evaluate", {"rows": rows, "k": KS})
    await call("inline_bad", "evaluate", {"rows": [{"query_id": "x", "query": "y"}]})
    await call("inline_twice", "evaluate", {"rows": rows[:1] * 2})  # a query_id twice
    await call("inspect", "inspect_collection", {})
    await call("config", "config", {})
    return out


def error_code(res: CallToolResult) -> str:
    """The contract code of a tool error (structured, and the same in its JSON text)."""
    assert res.is_error, res
    assert res.structured_content is not None
    text = res.content[0]
    assert text.type == "text" and json.loads(text.text) == res.structured_content
    assert "Traceback" not in text.text
    error = res.structured_content["error"]
    assert error["message"]
    return str(error["code"])


def valid(res: CallToolResult, tool: Tool) -> dict[str, Any]:
    """A successful result: structuredContent validates against the tool's declared schema and
    its text copy is the same JSON."""
    assert not res.is_error, res.content
    assert tool.output_schema is not None
    data = res.structured_content
    assert data is not None
    jsonschema.Draft202012Validator.check_schema(tool.output_schema)
    jsonschema.Draft202012Validator(tool.output_schema).validate(data)
    text = res.content[0]
    assert text.type == "text" and json.loads(text.text) == data
    return data


def check_session(
    s: Session, cli_report: dict[str, Any], refused: str = "outside the folders"
) -> None:
    """Everything a read-only server must answer (``cli_report``: ``ragsonde eval --json`` on
    the same benchmark and collection)."""
    assert set(s.tools) == READ_TOOLS
    for tool in s.tools.values():
        assert tool.description and tool.input_schema["type"] == "object"
        assert tool.output_schema is not None, tool.name
        assert tool.annotations is not None and tool.annotations.read_only_hint is True
    hit = valid(s.calls["search"], s.tools["search"])
    scores = [r["similarity_score"] for r in hit["results"]]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True)
    assert "lidar" in hit["results"][0]["url"], hit["results"][0]
    assert hit["search"]["mode"] == "dense" and hit["timings"]["total_ms"] > 0
    assert valid(s.calls["search_after_errors"], s.tools["search"])["results"] == hit["results"]
    assert error_code(s.calls["bad_collection"]) == "COLLECTION_NOT_FOUND"
    assert error_code(s.calls["bad_top_k_type"]) == "VALIDATION_ERROR"
    assert error_code(s.calls["bad_top_k"]) == "VALIDATION_ERROR"
    for key in ("outside_roots", "traversal"):
        assert error_code(s.calls[key]) == "VALIDATION_ERROR"
        assert refused in s.calls[key].structured_content["error"]["message"]
    summary = valid(s.calls["evaluate"], s.tools["evaluate"])
    assert summary["metrics"] == cli_report["metrics"]
    assert summary["queries"] == cli_report["n_queries"]
    assert s.report["metrics"] == cli_report["metrics"]
    assert s.report["per_query"].keys() == cli_report["per_query"].keys()
    assert len(s.run_file.splitlines()) >= summary["queries"]
    n = summary["queries"]
    assert s.progress and s.progress[-1] == (n, n)
    inline = valid(s.calls["inline"], s.tools["evaluate"])
    assert inline["metrics"] == cli_report["metrics"] and inline["dataset"] == "inline rows"
    assert inline["report_id"] != summary["report_id"]
    assert error_code(s.calls["inline_bad"]) == "VALIDATION_ERROR"
    assert "relevant" in s.calls["inline_bad"].structured_content["error"]["message"]
    # named as the client sent them, not by the temporary file the server wrote them to
    assert error_code(s.calls["inline_twice"]) == "VALIDATION_ERROR"
    said = s.calls["inline_twice"].structured_content["error"]["message"]
    assert said == "Cannot read the inline rows: query_id values repeat", said
    worst = valid(s.calls["failing"], s.tools["failing_queries"])
    values = [q["value"] for q in worst["queries"]]
    assert values == sorted(values) and worst["total"] == n
    assert values[0] == min(r["metrics"]["ndcg@10"] for r in cli_report["per_query"].values())
    explained = valid(s.calls["explain"], s.tools["explain_miss"])
    assert explained["k"] == 10
    inspected = valid(s.calls["inspect"], s.tools["inspect_collection"])
    assert inspected["name"] == "robotics" and inspected["points_count"] > 0
    cfg = valid(s.calls["config"], s.tools["config"])
    assert cfg["allow_write"] is False
    assert {"collection", "home"} <= {row["key"] for row in cfg["settings"]}


def server(home: Path, root: Path, *extra: str, env: dict[str, str] | None = None) -> Any:
    """``ragsonde mcp`` on the sample collection of ``home``, reading under ``root``."""
    args = ["-m", "ragsonde", "mcp", "--collection", "robotics", "--root", str(root), *extra]
    return StdioServerParameters(
        command=sys.executable, args=args, env={**home_env(home), **(env or {})}
    )
