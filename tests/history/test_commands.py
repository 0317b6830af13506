"""``ragsonde history`` list, show, trend, prune, export (each ``--json`` valid against its
published schema), and ``eval --baseline`` gating on an exported run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ragsonde.evaluate.schema import get_schema
from tests.history.support import Story, degraded_copy
from tests.support import Cli, run


def _json(cli: Cli, schema: str, *args: str) -> Any:
    r = cli("history", *args, "--json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    jsonschema.Draft202012Validator(get_schema(schema)).validate(doc)
    return doc


def test_list_filters_by_benchmark_and_collection(cli: Cli, story: Story):
    h = ("--history", str(story.history))
    every = _json(cli, "history-list", "list", *h)
    assert [r["run_id"] for r in every["runs"]] == sorted(story.runs.values())
    hashes = {r["benchmark_sha256"] for r in every["runs"]}
    assert len(hashes) == 2  # the changed labels are another benchmark
    labels = every["runs"][-1]["benchmark_sha256"]
    only = _json(cli, "history-list", "list", *h, "--benchmark", labels[:12])
    assert [r["run_id"] for r in only["runs"]] == [story.runs["labels"]]
    assert _json(cli, "history-list", "list", *h, "--collection", "nope")["runs"] == []
    text = cli("history", "list", *h).stdout
    assert "ndcg@10" in text and f"{every['runs'][0]['metrics']['ndcg@10']:.4f}" in text


def test_show_gives_the_fingerprint_and_the_bands(cli: Cli, story: Story):
    shown = _json(cli, "history-show", "show", "1", "--history", str(story.history))
    assert shown["fingerprint"]["search"]["hnsw_ef"] is None
    assert shown["fingerprint"]["embedder"]["weights_sha256"]
    assert shown["fingerprint"]["index"]["points_count"] == 125
    low, high = shown["bands"]["ndcg@10"]
    assert low <= shown["run"]["metrics"]["ndcg@10"] <= high and low < high


def test_trend_marks_what_changed_and_writes_the_plot(cli: Cli, story: Story, tmp_path: Path):
    svg = tmp_path / "trend.svg"
    t = _json(
        cli, "history-trend", "trend", "ndcg@10", "--history", str(story.history), "--out", str(svg)
    )
    assert [p["run_id"] for p in t["points"]] == sorted(story.runs.values())
    assert [p["changed"] for p in t["points"]][:3] == [
        [],
        ["search.hnsw_ef"],
        ["content.sample_sha256", "content.sampled", "index.points_count"],
    ]
    assert len(t["sparkline"]) == 4
    assert all(p["ci_low"] <= p["value"] <= p["ci_high"] for p in t["points"])
    drawn = svg.read_text(encoding="utf-8")
    assert drawn.count('class="run"') == 4 and "search.hnsw_ef" in drawn


def test_export_then_prune(cli: Cli, story: Story, tmp_path: Path):
    history = tmp_path / "copy.sqlite"
    shutil.copy(story.history, history)
    out = tmp_path / "runs.jsonl"
    done = _json(cli, "history-export", "export", "--history", str(history), "--out", str(out))
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert done["runs"] == len(lines) == 4
    assert lines[0]["report"]["per_query"]["q01"]["metrics"]["ndcg@10"] >= 0
    pruned = _json(cli, "history-prune", "prune", "--keep", "1", "--history", str(history))
    assert (pruned["deleted"], pruned["kept"]) == (3, 1)
    left = _json(cli, "history-list", "list", "--history", str(history))["runs"]
    assert [r["run_id"] for r in left] == [story.runs["labels"]]


def test_eval_baseline_from_an_export_gates_on_a_regression(cli: Cli, story: Story, tmp_path: Path):
    """The exported baseline against the same collection passes; against a copy that lost
    two thirds of its documents, the gate fails (exit 1) and the diff names what changed."""
    exported = tmp_path / "baseline.jsonl"
    assert cli("history", "export", "1", "--history", str(story.history), "-o", str(exported))
    degraded = degraded_copy(story.home, tmp_path / "degraded")
    history = tmp_path / "h.sqlite"
    args = ["eval", str(story.bench), "-c", "robotics", "--no-throughput"]
    ok = cli(
        *args, "--home", str(story.home), "--history", str(history), "--baseline", str(exported)
    )
    assert ok.exit_code == 0, ok.output
    assert "PASS no significant regression on ndcg@10" in ok.stdout
    bad = cli(
        *args, "--allow-missing", "--home", str(degraded), "--history", str(history),
        "--baseline", str(exported),
    )  # fmt: skip
    assert bad.exit_code == 1, bad.output
    assert "significant regression" in bad.stderr and "ndcg@10" in bad.stderr
    assert "index.points_count: 125 ->" in bad.stdout and "hit → miss" in bad.stdout


@pytest.mark.parametrize("flag", ["--no-record", "RAGSONDE_RECORD=0"])
def test_no_record_records_nothing(cli: Cli, story: Story, tmp_path: Path, flag: str):
    history = tmp_path / "none.sqlite"
    few = tmp_path / "few.jsonl"
    few.write_text("".join(story.bench.read_text("utf-8").splitlines(True)[:3]), "utf-8")
    args = ["eval", str(few), "-c", "robotics", "--home", str(story.home), "--no-throughput"]
    env = {"RAGSONDE_HISTORY": str(history)}
    if flag.startswith("--"):
        r = cli(*args, flag, env=env)
    else:
        r = cli(*args, env={**env, "RAGSONDE_RECORD": "0"})
    assert r.exit_code == 0, r.output
    assert "recorded as run" not in r.stdout and not history.exists()
    r = cli(*args, env=env)
    assert "recorded as run 1" in r.stdout and history.exists()


def test_the_pytest_plugin_fails_on_a_regression_against_an_exported_baseline(
    cli: Cli, story: Story, tmp_path: Path
):
    from ragsonde.config import Settings
    from ragsonde.testing.pytest_plugin import retrieval_gates

    exported = tmp_path / "baseline.jsonl"
    assert cli("history", "export", "1", "--history", str(story.history), "-o", str(exported))
    degraded = degraded_copy(story.home, tmp_path / "degraded")
    settings = Settings(home=degraded, collection="robotics")
    with pytest.raises(AssertionError, match=r"regressed against baseline run 1 .*\n  ndcg@10"):
        retrieval_gates(story.bench, [], settings=settings, baseline=exported, allow_missing=True)


def test_list_and_trend_as_processes_load_only_the_history(story: Story, tmp_path: Path):
    """`history list` and `trend` import the history store and its models, not the retriever,
    the embedders, numpy, the report models or the settings (their target: < 1 s as a process
    on 1,000 runs, bench/bench_history.py)."""
    heavy = {
        "numpy",
        "scipy",
        "ragsonde.retriever",
        "ragsonde.embedders",
        "ragsonde.evaluate.runner",
        "ragsonde.evaluate.report",
        "ragsonde.config",
    }
    h = ("--history", str(story.history), "--json")
    for args in (("list", *h), ("trend", "ndcg@10", *h, "--out", str(tmp_path / "t.svg"))):
        r = run("history", *args, env={"PYTHONPROFILEIMPORTTIME": "1"})
        assert r.returncode == 0, r.stderr
        loaded = {
            line.rsplit("|", 1)[1].strip()
            for line in r.stderr.splitlines()
            if line.startswith("import time:")
        }
        assert "ragsonde.history.store" in loaded, args  # the profile was read
        assert not loaded & heavy, (args, sorted(loaded & heavy))
        assert len(json.loads(r.stdout)["points" if args[0] == "trend" else "runs"]) == 4


def test_list_says_which_runs_had_gates(cli: Cli, story: Story, tmp_path: Path):
    """The gates column says pass or FAIL for a run checked against gates, and '-' for one that
    had none (it said 'pass' for every ungated run, as if a gate had passed)."""
    from ragsonde.config import Settings
    from ragsonde.evaluate import EvalOptions
    from tests.support import evaluate_in

    history = tmp_path / "history.sqlite"
    shutil.copy(story.history, history)
    settings = Settings(home=story.home, collection="robotics")
    for gates in (["ndcg@10>=0.01"], ["ndcg@10>=0.01", "recall@10>=1.01"]):
        options = EvalOptions(throughput=False, gates=gates)
        evaluate_in(
            story.bench, options, settings=settings, embedder=story.embedder, history=history
        )
    runs = _json(cli, "history-list", "list", "--history", str(history))["runs"]
    assert [(r["gates"], r["passed"]) for r in runs] == [(0, True)] * 4 + [(1, True), (2, False)]
    lines = cli("history", "list", "--history", str(history)).stdout.splitlines()
    # a row's first line starts with its run id and ends with its gates cell (others wrap)
    verdicts = [line.split()[-1] for line in lines if line.split()[0].isdigit()]
    assert verdicts == ["-"] * 4 + ["pass", "FAIL"]
