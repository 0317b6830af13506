"""Machine-made labels (generated questions, an LLM judge's) are never gold: a gate on their raw
score fails and says why, an estimate takes them as predicted and rests on a person's labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragsonde.config import Settings
from ragsonde.errors import QueryValidationError
from ragsonde.estimate import estimating
from ragsonde.evaluate import EvalOptions, EvalReport, evaluate
from ragsonde.evaluate.datasets import load_benchmark
from ragsonde.workspace import Workspace
from tests.estimate.support import HUMAN, generated_after, write_rows


def test_the_loader_tells_a_machines_labels_from_a_persons(tmp_path: Path) -> None:
    def label(source: str, judge: str) -> dict[str, Any]:
        return {"id": "lidar", "grade": 3, "source": source, "judge": judge}

    rows = [
        {"query_id": "given", "query": "a", "relevant": ["lidar"]},
        {"query_id": "gen", "query": "b", "relevant": ["lidar"], "generator": "offline:gist"},
        {"query_id": "llm", "query": "c", "relevant": ["lidar"],
         "labels": [label("llm", "openai:gpt-4o-mini")]},
        {"query_id": "judged", "query": "d", "relevant": ["lidar"], "generator": "offline:gist",
         "labels": [label("generator", "offline:gist"), label("human", "ana")]},
        {"query_id": "open", "query": "e"},
    ]  # fmt: skip
    bench = load_benchmark(write_rows(tmp_path / "b.jsonl", rows), keep_unlabelled=True)
    assert {q.query_id: q.machine_labels for q in bench.queries} == {
        "given": None,
        "gen": "generator:offline:gist",
        "llm": "llm:openai:gpt-4o-mini",
        "judged": None,  # a person judged it too
        "open": None,  # no labels at all: unlabelled, not machine-labelled
    }


def _run(bench: Path, home: Path, embedder: Any, **options: Any) -> EvalReport:
    o = EvalOptions(k=[10], throughput=False, **options)
    with Workspace(Settings(home=home, collection="robotics"), embedder=embedder) as ws:
        return evaluate(bench, o, ws, record=False, extend=estimating(o, workspace=ws))


@pytest.mark.slow
def test_a_gate_on_machine_labels_passes_only_through_an_estimate(
    sample_home: Path, embedder: Any, tmp_path: Path
) -> None:
    bench = generated_after(tmp_path / "generated.jsonl")
    gates = ["hit_rate@10>=0.05", "latency.total_ms.p95<=100000"]
    raw = _run(bench, sample_home, embedder, gates=gates)
    assert len(raw.benchmark.machine_labels) == 46 - HUMAN
    on_metric, on_latency = raw.gates
    assert raw.metrics["hit_rate@10"] >= 0.05  # the raw score clears it, and still it fails
    assert not on_metric.passed and on_metric.value == raw.metrics["hit_rate@10"]
    assert (on_metric.on or "").startswith(
        f"refused: a machine made the labels of {46 - HUMAN} of the 46 labelled queries "
        "(generator:offline:gist)"
    )
    assert "never on the raw score" in (on_metric.on or "") and "--estimate" in (on_metric.on or "")
    assert on_latency.passed and on_latency.on is None  # not a metric of the labels
    estimated = _run(bench, sample_home, embedder, gates=gates, estimate=True)
    e = (estimated.metrics_ci or {})["hit_rate@10"]
    spread = (estimated.metrics_ci or {})["ndcg@10"]  # hit_rate@10 may be 1 on every label
    assert (spread.n_labeled, spread.n_predicted) == (HUMAN, 46 - HUMAN)  # generated: predicted
    assert e.n_labeled == HUMAN
    assert estimated.passed == (e.low >= 0.05)
    assert estimated.gates[0].value == e.low and "lower end" in (estimated.gates[0].on or "")


@pytest.mark.slow
def test_an_estimate_needs_a_persons_labels(
    sample_home: Path, embedder: Any, tmp_path: Path
) -> None:
    bench = generated_after(tmp_path / "all-generated.jsonl", human=0)
    with pytest.raises(QueryValidationError, match="none of the 46 queries has a person's labels"):
        _run(bench, sample_home, embedder, estimate=True)
    # the way out it names gives a person's labels: an LLM judge's would be a machine's again
    with pytest.raises(QueryValidationError, match="in the web page's Judge view") as refused:
        _run(bench, sample_home, embedder, estimate=True)
    assert "are a machine's too" in str(refused.value)
