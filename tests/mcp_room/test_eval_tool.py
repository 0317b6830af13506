"""``ragsonde eval --mcp``: a small MCP search server written here with the SDK's ``MCPServer``,
over the real sample collection, evaluated like a collection.

Oracle: ``ragsonde eval`` on the collection itself with the same search (the tool wraps the
same retriever): the metrics and every query's ranking must be the very same, whether the items
carry document ids or only their text (matched back to documents).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.mcp_room.drive import KS
from tests.support import home_env

pytestmark = pytest.mark.slow  # starts processes that load the model

SERVER = '''
import sys

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

from ragsonde.config import load_settings
from ragsonde.retriever import Retriever
from ragsonde.workspace import Workspace

MODE = sys.argv[1]
retriever = Retriever(workspace=Workspace(load_settings(collection="robotics"), long_lived=True))
server = MCPServer("test-search")


class Hit(BaseModel):
    doc_id: str
    score: float


class Hits(BaseModel):
    results: list[Hit]


class Passage(BaseModel):
    content: str
    relevance: float | str


class Passages(BaseModel):
    passages: list[Passage]


def search(query, limit):
    return retriever.retrieve({"query_text": query, "top_k": limit}).results


if MODE == "ids":
    @server.tool()
    def find(query: str, limit: int = 10) -> Hits:
        """Search the robotics docs."""
        return Hits(results=[Hit(doc_id=r.metadata["doc_id"], score=r.similarity_score)
                             for r in search(query, limit)])
else:
    @server.tool()
    def find(query: str, limit: int = 10) -> Passages:
        """Search the robotics docs: passages, no ids."""
        out = [Passage(content=r.text, relevance=r.similarity_score) for r in search(query, limit)]
        if MODE == "broken":
            out[2] = Passage(content=out[2].content, relevance="very")
        return Passages(passages=out)

server.run("stdio")
'''


@pytest.fixture(scope="module")
def server_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tool") / "search_server.py"
    path.write_text(SERVER, encoding="utf-8")
    return path


def eval_tool(home: Path, bench: Path, server: str, *extra: str) -> tuple[int, dict[str, Any]]:
    args = ["eval", str(bench), "--mcp", server, "--tool", "find", "--json"]
    args += ["--k", ",".join(map(str, KS)), "-c", "robotics", *extra]
    out = subprocess.run(
        [sys.executable, "-m", "ragsonde", *args],
        capture_output=True,
        text=True,
        env=home_env(home),
        timeout=600,
    )
    assert "Traceback" not in out.stderr, out.stderr
    return out.returncode, json.loads(out.stdout)


def rankings(report: dict[str, Any]) -> dict[str, list[str]]:
    return {qid: [d for d, _ in row["retrieved"]] for qid, row in report["per_query"].items()}


def test_tool_with_ids_scores_as_the_collection_and_versus_it(
    sample_home: Path, bench_root: Path, cli_report: dict[str, Any], server_file: Path
) -> None:
    server = f"{sys.executable} {server_file} ids"
    code, out = eval_tool(sample_home, bench_root / "small.jsonl", server, "--versus", "robotics")
    assert code == 0
    a, b = out["a"], out["b"]
    assert b["metrics"] == cli_report["metrics"] == a["metrics"]
    assert rankings(b) == rankings(cli_report)
    assert b["collection"] == "mcp:find" and b["latency"]["total_ms"]["p50"] > 0
    assert "named by item id" in b["warnings"][0] and "id=doc_id" in b["warnings"][0]
    deltas = {m["metric"]: m["delta"] for m in out["comparison"]["metrics"]}
    assert deltas["ndcg@10"] == 0.0 and set(deltas.values()) == {0.0}
    # the same rankings: every labelled difference is 0, and the labelled queries alone cannot
    # say the two agree elsewhere: the classical interval is the exact bound, not [0, 0]
    ndcg = next(m for m in out["comparison"]["metrics"] if m["metric"] == "ndcg@10")
    bound = 1 - 0.025 ** (1 / ndcg["classical"]["n_labeled"])
    assert ndcg["classical"]["estimate"] == 0.0
    assert (ndcg["classical"]["low"], ndcg["classical"]["high"]) == pytest.approx((-bound, bound))


def test_tool_without_ids_is_matched_by_text(
    sample_home: Path, bench_root: Path, cli_report: dict[str, Any], server_file: Path
) -> None:
    server = f"{sys.executable} {server_file} text"
    code, out = eval_tool(sample_home, bench_root / "small.jsonl", server)
    assert code == 0
    assert out["metrics"]["ndcg@10"] == cli_report["metrics"]["ndcg@10"]
    assert rankings(out) == rankings(cli_report)
    assert any("matched to documents by exact text" in w for w in out["warnings"])
    assert any(" 0 of " in w for w in out["warnings"])


def test_malformed_output_and_unknown_tool_are_clear_errors(
    sample_home: Path, bench_root: Path, server_file: Path
) -> None:
    bench = bench_root / "small.jsonl"
    code, out = eval_tool(sample_home, bench, f"{sys.executable} {server_file} broken")
    assert code == 2 and out["error"]["code"] == "VALIDATION_ERROR"
    message = out["error"]["message"]
    assert "query q01: item 2" in message and "'relevance'" in message and '"very"' in message
    code, out = eval_tool(
        sample_home, bench, f"{sys.executable} {server_file} ids", "--tool", "nope"
    )
    assert code == 2 and "no tool 'nope'" in out["error"]["message"]
    assert "find" in out["error"]["message"]


def test_the_terminal_does_not_show_unmeasured_stages_or_unchecked_results_as_zeros(
    sample_home: Path, bench_root: Path, server_file: Path
) -> None:
    """An MCP tool times only the whole call and returns no payloads: the table showed 0.00 ms
    for embedding, search and post-processing, and "integrity: 0 results checked, 0 problems"."""
    args = ["eval", str(bench_root / "small.jsonl"), "--mcp", f"{sys.executable} {server_file} ids"]
    args += ["--tool", "find", "--k", "10", "-c", "robotics", "--no-record", "--no-throughput"]
    out = subprocess.run(
        [sys.executable, "-m", "ragsonde", *args],
        capture_output=True,
        text=True,
        env={**home_env(sample_home), "COLUMNS": "200"},
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    rows = {line.split()[1]: line for line in out.stdout.splitlines() if "_ms " in line}
    for stage in ("embedding_ms", "search_ms", "post_processing_ms"):
        assert "–" in rows[stage] and "0.00" not in rows[stage], rows
    assert "–" not in rows["total_ms"]
    assert "not measured" in out.stdout
    assert "integrity: not checked" in out.stdout and "0 results checked" not in out.stdout
