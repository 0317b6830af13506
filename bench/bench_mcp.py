"""What the MCP server costs a search: ``ragsonde mcp``'s ``search`` tool against the library.

    .venv/bin/python -m bench.bench_mcp [--quick] [--queries 200] [--rounds 3]

A SciFact slice (the first ``--queries`` test queries with judgements, their documents and 300
others; quick: 50 and 100) is ingested into a fresh home with the default model. Then, on the
same collection, the same queries (top_k 10, dense), in ``--rounds`` alternating rounds (quick:
2) of:

1. the library: ``Retriever.retrieve`` in this process;
2. the server: ``ragsonde mcp`` as a real process over stdio, ``tools/call search`` written to
   its stdin as one JSON-RPC line and its answer read back, timed from the write to the parsed
   answer: the server's cost (the pipe, the SDK's server, the result's structured content and
   its text copy) and nothing of a client's own;
3. the same through the SDK's ``ClientSession.call_tool`` (reported, not the target): what a
   Python agent waits, which adds the client's own work, above all its jsonschema validation of
   the answer against the tool's output schema.

Each pass runs every query once untimed (warm caches), then once timed. The embedded store is
held by one process at a time, so the two cannot interleave query by query; alternating rounds
spread the drift of a shared machine over both. Target: the server's p50 ≤ 1.2 × the
library's p50 (over all rounds).

Writes ``bench/results/mcp.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common import (
    SCIFACT,
    command,
    latency_summary,
    machine,
    print_table,
    require_scifact,
    verdict,
    write_results,
)

TARGET = 1.2
TOP_K = 10


def _queries(dataset: Path) -> list[str]:
    from ragsonde.evaluate.datasets import load_benchmark

    return [q.text for q in load_benchmark(dataset).queries]


def library(settings: Any, queries: list[str]) -> list[float]:
    """``Retriever.retrieve`` per query, ms (after an untimed pass)."""
    from ragsonde.retriever import Retriever
    from ragsonde.workspace import Workspace

    with Workspace(settings) as ws:
        retriever = Retriever(workspace=ws)
        ms: list[float] = []
        for timed in (False, True):
            for q in queries:
                t0 = time.perf_counter()
                resp = retriever.retrieve({"query_text": q, "top_k": TOP_K})
                if timed:
                    ms.append((time.perf_counter() - t0) * 1000)
                assert resp.status == "success", resp.error
    return ms


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAGSONDE_", "QDRANT_"))}
    env["RAGSONDE_HOME"] = str(home)
    return env


def raw_server(home: Path, collection: str, queries: list[str]) -> list[float]:
    """``tools/call search`` as JSON-RPC lines on the stdio of a ``ragsonde mcp`` process, ms
    from the write to the parsed answer (after an untimed pass)."""
    import json
    import subprocess

    from mcp_types.version import LATEST_HANDSHAKE_VERSION

    proc = subprocess.Popen(
        [sys.executable, "-m", "ragsonde", "mcp", "--collection", collection],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=_env(home),
        text=True,
        bufsize=1,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    ids = iter(range(1, 1_000_000))

    def ask(method: str, params: dict[str, Any]) -> dict[str, Any]:
        n = next(ids)
        msg = {"jsonrpc": "2.0", "id": n, "method": method, "params": params}
        proc.stdin.write(json.dumps(msg) + "\n")  # type: ignore[union-attr]
        while True:
            answer: dict[str, Any] = json.loads(proc.stdout.readline())  # type: ignore[union-attr]
            if answer.get("id") == n:
                return answer

    try:
        ask(
            "initialize",
            {
                "protocolVersion": LATEST_HANDSHAKE_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        proc.stdin.write("\n")
        ms: list[float] = []
        for timed in (False, True):
            for q in queries:
                args = {"name": "search", "arguments": {"query": q, "top_k": TOP_K}}
                t0 = time.perf_counter()
                answer = ask("tools/call", args)
                if timed:
                    ms.append((time.perf_counter() - t0) * 1000)
                assert not answer["result"].get("isError"), answer
        return ms
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def server(home: Path, collection: str, queries: list[str]) -> list[float]:
    """The ``search`` tool of a ``ragsonde mcp`` process, round trip per call, ms (after an
    untimed pass)."""
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ragsonde", "mcp", "--collection", collection],
        env=_env(home),
    )

    async def main() -> list[float]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            ms: list[float] = []
            for timed in (False, True):
                for q in queries:
                    t0 = time.perf_counter()
                    res = await session.call_tool("search", {"query": q, "top_k": TOP_K})
                    if timed:
                        ms.append((time.perf_counter() - t0) * 1000)
                    assert not res.is_error, res.content
            return ms

    return anyio.run(main)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    require_scifact()
    from ragsonde.config import Settings
    from ragsonde.ingest import ingest
    from ragsonde.testing import beir_slice

    n_queries, n_extra = (50, 100) if args.quick else (args.queries, 300)
    rounds = 2 if args.quick else args.rounds
    lib: list[list[float]] = []
    srv: list[list[float]] = []
    sdk: list[list[float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-mcp-") as tmp:
        dataset = beir_slice(SCIFACT, Path(tmp) / "slice", n_queries, n_extra)
        settings = Settings(home=Path(tmp) / "home", collection="scifact")
        t0 = time.perf_counter()
        built = ingest(str(dataset), fmt="beir", settings=settings)
        build_s = time.perf_counter() - t0
        queries = _queries(dataset)
        for _ in range(rounds):
            lib.append(library(settings, queries))
            srv.append(raw_server(settings.home, "scifact", queries))
            sdk.append(server(settings.home, "scifact", queries))
    all_lib = [x for r in lib for x in r]
    all_srv = [x for r in srv for x in r]
    all_sdk = [x for r in sdk for x in r]
    ratio = statistics.median(all_srv) / statistics.median(all_lib)
    data = {
        "command": command(),
        **machine(),
        "quick": args.quick,
        "collection_points": built.to_json().get("chunks"),
        "queries": len(queries),
        "rounds": rounds,
        "top_k": TOP_K,
        "ingest_s": round(build_s, 1),
        "library_ms": latency_summary(all_lib),
        "server_ms": latency_summary(all_srv),
        "library_p50_by_round": [round(statistics.median(r), 3) for r in lib],
        "server_p50_by_round": [round(statistics.median(r), 3) for r in srv],
        "sdk_client_ms": latency_summary(all_sdk),
        "sdk_client_p50_by_round": [round(statistics.median(r), 3) for r in sdk],
        "sdk_ratio_p50": round(statistics.median(all_sdk) / statistics.median(all_lib), 3),
        "ratio_p50": round(ratio, 3),
        "target": TARGET,
        "met": ratio <= TARGET,
    }
    print_table(
        "MCP search vs the library (ms)",
        ["figure", "p50", "p95", "p99"],
        [
            [name, *(f"{v:.2f}" for v in latency_summary(ms).values())]
            for name, ms in (
                ("library, Retriever.retrieve", all_lib),
                ("ragsonde mcp search, JSON-RPC on stdio", all_srv),
                ("the same through the SDK's ClientSession", all_sdk),
            )
        ],
        caption=f"server p50 / library p50 = {ratio:.3f} (target ≤ {TARGET}): "
        f"{verdict(ratio <= TARGET)}; p50 by round: library {data['library_p50_by_round']}, "
        f"server {data['server_p50_by_round']}",
    )
    print(f"wrote {write_results('mcp', data, quick=args.quick)}")


if __name__ == "__main__":
    main()
