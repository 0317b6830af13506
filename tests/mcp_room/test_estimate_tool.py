"""The MCP ``evaluate`` tool's estimate (as ``eval --estimate``): a partly labelled benchmark
evaluated through the SDK's own client over stdio answers ``metrics_ci`` for every metric.

Oracles: ``ragsonde eval --estimate --json`` on the same file (the very same estimates), the
tool's declared outputSchema, and the counts of labelled and unlabelled rows written here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, stdio_client

from ragsonde.samples import robotics_benchmark
from tests.mcp_room.drive import KS, error_code, server, valid
from tests.support import home_env

pytestmark = pytest.mark.slow  # starts processes that load the model
LABELLED = 20


@pytest.fixture(scope="module")
def partly(bench_root: Path) -> Path:
    """The sample benchmark (46 rows) with ``relevant`` kept on its first LABELLED rows."""
    rows = [json.loads(line) for line in robotics_benchmark().read_text().splitlines() if line]
    for row in rows[LABELLED:]:
        del row["relevant"]
    path = bench_root / "partly.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _cli(home: Path, bench: Path, *extra: str) -> dict[str, Any]:
    args = ["eval", str(bench), "--collection", "robotics", "--json", "--no-record"]
    args += ["--no-throughput", "--k", ",".join(map(str, KS)), "--estimate", *extra]
    out = subprocess.run(
        [sys.executable, "-m", "ragsonde", *args],
        capture_output=True,
        text=True,
        env=home_env(home),
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def test_evaluate_estimates_a_partly_labelled_benchmark_as_the_cli(
    sample_home: Path, bench_root: Path, partly: Path
) -> None:
    async def main() -> dict[str, Any]:
        async with (
            stdio_client(server(sample_home, bench_root)) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            base = {"benchmark": str(partly), "k": KS}
            finite = {"estimate": True, "predictor": "none", "estimand": "benchmark"}
            return {
                "tool": tools["evaluate"],
                "plain": await session.call_tool("evaluate", base),
                "scores": await session.call_tool("evaluate", {**base, "estimate": True}),
                "finite": await session.call_tool(
                    "evaluate", {**base, **finite, "gates": ["ndcg@10>=0.2"]}
                ),
                "bad": await session.call_tool(
                    "evaluate", {**base, "estimate": True, "predictor": "oracle"}
                ),
            }

    got = anyio.run(main)
    tool = got["tool"]
    props = tool.input_schema["properties"]
    assert {"estimate", "predictor", "estimand"} <= set(props)
    plain = valid(got["plain"], tool)
    assert plain["metrics_ci"] is None
    scores = valid(got["scores"], tool)
    finite = valid(got["finite"], tool)
    finite_flags = ("--predictor", "none", "--estimand", "benchmark", "--gate", "ndcg@10>=0.2")
    for doc, extra in ((scores, ()), (finite, finite_flags)):
        cli = _cli(sample_home, partly, *extra)
        assert doc["metrics_ci"] == cli["metrics_ci"]
        assert doc["metrics"] == cli["metrics"] and doc["gates"] == {
            g["gate"]: g["passed"] for g in cli["gates"]
        }
    e = scores["metrics_ci"]["ndcg@10"]
    assert (e["n_labeled"], e["n_predicted"]) == (LABELLED, 46 - LABELLED)
    assert e["method"] == "cross-ppi++" and e["low"] <= e["estimate"] <= e["high"]
    f = finite["metrics_ci"]["ndcg@10"]
    assert f["method"] == "classical" and f["n_labeled"] == LABELLED
    # a gate on an estimate tests the interval's lower end
    assert finite["gates"]["ndcg@10>=0.2"] == (f["low"] >= 0.2)
    assert error_code(got["bad"]) == "VALIDATION_ERROR"
