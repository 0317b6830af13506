"""``ragsonde eval --mcp "ragsonde mcp"``: ragsonde's own ``search`` tool over stdio, evaluated
at the default cutoffs (1 to 100). Oracle: ``ragsonde eval`` on the collection it searches.

The client asks a tool for three times its deepest cutoff; ragsonde's tool took at most 100 and
every query came back a tool error (nDCG 0.0, exit 0). The tool now publishes its bound and the
client keeps under a declared ``maximum``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import home_env

pytestmark = pytest.mark.slow  # starts processes that load the model


def _eval(home: Path, *args: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-m", "ragsonde", "eval", *args, "--json", "--no-record"],
        capture_output=True,
        text=True,
        env=home_env(home),
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    report: dict[str, Any] = json.loads(out.stdout)
    return report


def test_ragsondes_own_search_tool_scores_as_its_collection_at_depth_100(
    sample_home: Path, bench_root: Path
) -> None:
    bench = str(bench_root / "small.jsonl")
    oracle = _eval(sample_home, bench, "-c", "robotics", "--no-throughput")
    server = f"{sys.executable} -m ragsonde mcp -c robotics"
    tool = ["--mcp", server, "--tool", "search"]
    mapped = _eval(sample_home, bench, *tool, "--map", "id=metadata.doc_id")
    assert mapped["benchmark"]["errors"] == {}
    # to depth 10 the very same; at 100 the tool's 100 chunks may name fewer documents than
    # the collection's 300, and the report says so
    shallow = {k: v for k, v in oracle["metrics"].items() if not k.endswith("@100")}
    assert {k: mapped["metrics"][k] for k in shallow} == shallow
    assert any(w.startswith("The tool takes at most 100 items") for w in mapped["warnings"])
    # without the map the tool's chunk ids meet document labels: nothing matches, and the
    # report says why instead of reading nDCG 0 as the tool's quality
    plain = _eval(sample_home, bench, *tool)
    assert plain["benchmark"]["errors"] == {} and plain["metrics"]["ndcg@10"] == 0.0
    assert any(w.startswith("None of the") and "--map id=PATH" in w for w in plain["warnings"]), (
        plain["warnings"]
    )
