"""``failing_queries`` over production traffic, through the SDK's own client over stdio: the
weakest queries of a saved traffic report, and of the latest recorded traffic run.

Oracle: ``ragsonde traffic -o`` run as a user runs it; its JSON's queries sorted by predicted
(lowest first, then the most asked) are what the tool must list, with the same values and
evidence.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, stdio_client

from tests.mcp_room.drive import error_code, server, valid
from tests.support import home_env

pytestmark = pytest.mark.slow  # starts processes that load the model

OFF_TOPIC = [
    "how long should I bake banana bread at 180 degrees?",
    "who won the football world cup in 1998?",
    "what wine goes with grilled salmon?",
]


def test_failing_queries_lists_the_weakest_of_traffic(
    sample_home: Path, bench_root: Path, tmp_path: Path
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    questions = [
        json.loads(line)["query"]
        for line in (bench_root / "small.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    log = root / "chat.jsonl"
    rows = [{"query": q} for q in questions + OFF_TOPIC] + [{"query": OFF_TOPIC[0]}]
    log.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    history = tmp_path / "history.sqlite"
    saved = root / "traffic.json"
    env = {**home_env(sample_home), "RAGSONDE_HISTORY": str(history)}
    args = ["traffic", str(log), "-c", "robotics", "-o", str(saved), "--record", "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "ragsonde", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(saved.read_text(encoding="utf-8"))
    assert report["history_run"] is not None
    scored = [q for q in report["queries"] if q["predicted"] is not None]
    oracle = sorted(scored, key=lambda q: (q["predicted"], -q["weight"]))[:4]
    (root / "eval.json").write_text('{"schema_version": "1.8", "kind": "eval"}', encoding="utf-8")
    (root / "empty.json").write_text("", encoding="utf-8")
    (root / "folder.json").mkdir()
    (root / "latin1.json").write_bytes(b'{"collection": "caf\xe9"}')
    with (root / "one_line.json").open("wb") as f:  # read whole, it was held whole
        f.write(b'{"collection": "' + b"x" * (64 << 20) + b'"}')
    params = server(sample_home, root, env={"RAGSONDE_HISTORY": str(history)})

    async def main() -> dict[str, Any]:
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            tools = {t.name: t for t in (await session.list_tools()).tools}
            calls = {
                "file": {"traffic": "traffic.json", "limit": 4},
                "run": {"traffic": "last", "limit": 4},
                "outside": {"traffic": str(bench_root / "small.jsonl")},
                "not_traffic": {"traffic": "chat.jsonl"},
                "no_such_run": {"traffic": "last~3"},
                "eval_report": {"traffic": "eval.json"},
                "empty": {"traffic": "empty.json"},
                "folder": {"traffic": "folder.json"},
                "latin1": {"traffic": "latin1.json"},
                "one_line": {"traffic": "one_line.json"},
            }
            out = {k: await session.call_tool("failing_queries", v) for k, v in calls.items()}
            return {"tool": tools["failing_queries"], **out}

    got = anyio.run(main)
    from_file = valid(got["file"], got["tool"])
    assert from_file["metric"] == "predicted" and from_file["total"] == len(report["queries"])
    listed = from_file["queries"]
    assert [q["query_id"] for q in listed] == [q["query_id"] for q in oracle]
    assert [q["value"] for q in listed] == [q["predicted"] for q in oracle]
    for q, o in zip(listed, oracle, strict=True):
        assert q["weak"] == o["weak"] and q["retrieved"] == o["top_ids"]
        assert q["signals"] and all(o["signals"][n] == v for n, v in q["signals"].items())
        assert q["next"].startswith("ragsonde query")
    # the off-topic questions, the one asked twice first: the weakest of the traffic
    assert {q["query"] for q in listed[:3]} == set(OFF_TOPIC) and listed[0]["query"] == OFF_TOPIC[0]
    from_run = valid(got["run"], got["tool"])
    assert from_run["source"] == f"traffic run {report['history_run']}"
    assert {q["query_id"] for q in from_run["queries"]} == {q["query_id"] for q in oracle}
    assert sorted(q["value"] for q in from_run["queries"]) == [q["predicted"] for q in oracle]
    assert all(q["signals"] and q["weak"] is not None for q in from_run["queries"])
    for bad in ("outside", "not_traffic", "no_such_run"):
        assert error_code(got[bad]) == "VALIDATION_ERROR", bad
    # each says what the file is, in plain words (they said "Input should be 'rrf', 'dbsf' or
    # 'linear' at search.fusion", "Invalid JSON: EOF while parsing", "'utf-8' codec can't
    # decode", "Is a directory")
    for bad, words in {
        "eval_report": "it is a ragsonde eval file; a traffic report is what `ragsonde traffic",
        "empty": "it is empty",
        "folder": "it is a folder",
        "latin1": "line 1 is not UTF-8 text (invalid continuation byte at byte",
        "one_line": "line 1 is longer than 64 MiB, the most ragsonde reads of a line",
    }.items():
        assert error_code(got[bad]) == "VALIDATION_ERROR", bad
        message = got[bad].structured_content["error"]["message"]
        assert words in message, (bad, message)
