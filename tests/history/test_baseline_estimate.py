"""``eval --estimate --baseline`` on a partly labelled benchmark: the run against its baseline
by PPI++ over every query (labelled and predicted), the gate's verdict on that interval, the
classical interval over the labelled queries beside it; the same numbers ``history diff``
gives for the same two runs (one code path, :func:`ragsonde.history.baseline.against_baseline`).

Oracles: the classical interval written out here (Student's t over the labelled queries'
paired differences); the exit code against the PPI++ interval; ``history diff``'s JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from tests.history.support import Story, degraded_copy
from tests.support import Cli

pytestmark = pytest.mark.slow
LABELLED = 20


def _partly(bench: Path, out: Path) -> Path:
    """``bench`` with ``relevant`` kept on its first LABELLED rows only."""
    rows = [json.loads(line) for line in bench.read_text("utf-8").splitlines() if line]
    for row in rows[LABELLED:]:
        del row["relevant"]
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return out


def _ndcg(diff: dict[str, Any]) -> dict[str, Any]:
    return next(m for m in diff["metrics"] if m["metric"] == "ndcg@10")


def test_a_baseline_on_a_partly_labelled_benchmark_gates_on_the_ppi_interval(
    cli: Cli, story: Story, tmp_path: Path
) -> None:
    bench = _partly(story.bench, tmp_path / "partly.jsonl")
    history = tmp_path / "h.sqlite"
    degraded = degraded_copy(story.home, tmp_path / "degraded")
    common = ["eval", str(bench), "-c", "robotics", "--no-throughput", "--estimate",
              "--history", str(history), "--json"]  # fmt: skip
    first = cli(*common, "--home", str(story.home))
    assert first.exit_code == 0, first.output
    a = json.loads(first.stdout)
    assert a["metrics_ci"]["ndcg@10"]["n_labeled"] == LABELLED

    # The same collection again: no difference, the gate passes.
    same = cli(*common, "--home", str(story.home), "--baseline", "1")
    assert same.exit_code == 0, same.output
    json.loads(same.stdout)  # stdout holds the report alone
    flat = _ndcg(json.loads(same.stderr))
    assert flat["ppi"]["estimate"] == pytest.approx(0.0, abs=1e-9)
    assert flat["ppi"]["low"] <= 0 <= flat["ppi"]["high"] and not flat["significant"]

    # A copy that lost two thirds of its documents: the verdict follows the PPI++ interval.
    worse = cli(*common, "--home", str(degraded), "--allow-missing", "--baseline", "1")
    b = json.loads(worse.stdout)
    diff = json.loads(worse.stderr)
    assert (diff["a"]["run_id"], diff["b"]["run_id"]) == (1, 3)
    labelled = sorted(q for q, row in a["per_query"].items() if row["relevant"])
    assert len(labelled) == LABELLED and len(a["per_query"]) == len(b["per_query"]) == 46
    for m in diff["metrics"]:
        ppi, classical = m["ppi"], m["classical"]
        assert (ppi["n_labeled"], ppi["n_predicted"]) == (LABELLED, 46 - LABELLED)
        assert ppi["method"] == "cross-ppi++"
        d = np.asarray(
            [b["per_query"][q]["metrics"][m["metric"]] - a["per_query"][q]["metrics"][m["metric"]]
             for q in labelled]
        )  # fmt: skip
        assert classical["estimate"] == pytest.approx(d.mean(), abs=1e-6)
        if d.std() > 0:  # scipy's paired t interval, cut to [-1, 1]
            ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
            want = max(-1.0, float(ci.low)), min(1.0, float(ci.high))
            assert (classical["low"], classical["high"]) == pytest.approx(want, abs=1e-5)
        assert m["significant"] == (ppi["low"] > 0 or ppi["high"] < 0)
    ndcg = _ndcg(diff)
    regressed = ndcg["ppi"]["high"] < 0
    assert regressed, ndcg  # two thirds of the documents gone: the interval must show it
    assert diff["gate"]["passed"] is False and diff["gate"]["regressions"] == ["ndcg@10"]
    assert worse.exit_code == 1

    # history diff on the same two runs: the very same intervals.
    again = cli("history", "diff", "1", "3", "--history", str(history), "--json")
    assert again.exit_code == 0, again.output
    assert _ndcg(json.loads(again.stdout))["ppi"] == ndcg["ppi"]

    # On the terminal: the PPI++ line, and the verdict.
    shown = cli(*common[:-1], "--home", str(degraded), "--allow-missing", "--baseline", "1")
    assert shown.exit_code == 1
    p = ndcg["ppi"]
    assert "ndcg@10: B - A by cross-ppi++ over every query" in shown.stdout
    assert f"rests on {LABELLED} labelled queries, {46 - LABELLED} predicted" in shown.stdout
    assert "significant regression" in shown.stderr and "ndcg@10" in shown.stderr
    assert p["low"] < p["high"] < 0


def test_the_pytest_plugin_fails_on_the_ppi_interval_too(
    cli: Cli, story: Story, tmp_path: Path
) -> None:
    """``retrieval_gates(..., estimate=True, baseline=FILE)``: the same comparison as ``eval
    --baseline``, and its failure names the PPI++ interval it rests on."""
    from ragsonde.config import Settings
    from ragsonde.testing.pytest_plugin import retrieval_gates

    bench = _partly(story.bench, tmp_path / "partly.jsonl")
    history = tmp_path / "h.sqlite"
    first = cli("eval", str(bench), "-c", "robotics", "--no-throughput", "--estimate",
                "--home", str(story.home), "--history", str(history))  # fmt: skip
    assert first.exit_code == 0, first.output
    exported = tmp_path / "baseline.jsonl"
    assert cli("history", "export", "1", "--history", str(history), "-o", str(exported))
    degraded = degraded_copy(story.home, tmp_path / "degraded")
    settings = Settings(home=degraded, collection="robotics")
    with pytest.raises(AssertionError) as failed:
        retrieval_gates(bench, [], settings=settings, baseline=exported, allow_missing=True,
                        estimate=True)  # fmt: skip
    message = str(failed.value)
    assert "regressed against baseline run 1" in message
    assert "ndcg@10:" in message and "B - A by cross-ppi++" in message
    assert f"{LABELLED} labelled, {46 - LABELLED} predicted" in message
