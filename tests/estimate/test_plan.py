"""``judge --plan``: on a partly labelled SciFact slice, judging the plan's queries narrows the
interval more than judging as many random ones, and the estimate stays unbiased under it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragsonde.estimate import ScoreSignals, estimate_metric
from ragsonde.estimate.plan import JudgingPlan, labels_for_width, plan_judging
from ragsonde.evaluate import EvalReport
from ragsonde.models.prediction import PredictedQuery, QueryPrediction
from tests.support import home_env, run

pytestmark = pytest.mark.slow
START, PLANNED = 30, 20


def _predictions(report: EvalReport) -> list[QueryPrediction]:
    scores = {q: [s for _, s in row.retrieved] for q, row in report.per_query.items()}
    queries = [PredictedQuery(query_id=q, text=r.query) for q, r in report.per_query.items()]
    return ScoreSignals(lambda q: scores[q.query_id]).predict(queries)


def test_the_plan_narrows_the_interval_more_than_random_queries(slice_report: EvalReport) -> None:
    ids = list(slice_report.per_query)
    truth = {q: row.metrics["ndcg@10"] for q, row in slice_report.per_query.items()}
    preds = _predictions(slice_report)
    rng = np.random.default_rng(3)
    planned, random_, covered = [], [], 0
    for draw in range(60):
        start = {ids[i]: truth[ids[i]] for i in rng.choice(len(ids), START, replace=False)}
        plan = plan_judging(ids, start, preds, PLANNED, seed=draw)
        assert len(plan.plan) == PLANNED and not {p.query_id for p in plan.plan} & set(start)
        judged = start | {p.query_id: truth[p.query_id] for p in plan.plan}  # from the qrels
        est = estimate_metric(judged, ids, preds, probabilities=plan.probabilities, seed=draw)
        rest = [q for q in ids if q not in start]
        more = start | {q: truth[q] for q in rng.choice(rest, PLANNED, replace=False)}
        other = estimate_metric(more, ids, preds, seed=draw)
        planned.append(est.high - est.low)
        random_.append(other.high - other.low)
        covered += est.low <= float(np.mean(list(truth.values()))) <= est.high
    assert float(np.mean(planned)) < float(np.mean(random_))
    # unbiased under the plan: it still covers the full-label mean (60 draws: sd 0.03)
    assert covered / 60 >= 0.88


def test_labels_for_a_width_follow_the_square_root_law() -> None:
    assert labels_for_width(0.2, 50, 0.1) == 200
    assert labels_for_width(0.2, 50, None) is None


def test_judge_plan_writes_a_plan_the_estimate_reads(
    slice_report: EvalReport, estimate_home: Path, tmp_path: Path, embedder: Any
) -> None:
    rows = list(slice_report.per_query.items())
    bench = tmp_path / "partly.jsonl"

    def write(labelled: set[str]) -> None:
        bench.write_text("".join(
            json.dumps({"query_id": q, "query": r.query,
                        **({"relevant": sorted(r.relevant)} if q in labelled else {})}) + "\n"
            for q, r in rows
        ))  # fmt: skip

    start = {q for q, _ in rows[:START]}
    write(start)
    env = home_env(estimate_home)
    out = tmp_path / "plan.json"
    done = run("judge", str(bench), "-c", "slice", "--plan", str(PLANNED), "--target-width",
               "0.1", "-o", str(out), env=env, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "more judged queries" in done.stdout
    plan = JudgingPlan.model_validate_json(out.read_text())
    chosen = {p.query_id for p in plan.plan}
    assert len(chosen) == PLANNED and not chosen & start
    assert plan.labelled_now == START and plan.more_for_target is not None
    assert all(0 < p.probability <= 1 for p in plan.plan)
    # a width no judging of this benchmark reaches says so (it printed "about 2377… more")
    far = run("judge", str(bench), "-c", "slice", "--plan", str(PLANNED), "--target-width",
              "0.001", "-o", str(tmp_path / "far.json"), env=env, timeout=300)  # fmt: skip
    assert far.returncode == 0, far.stderr
    far_text = " ".join(far.stdout.split())
    assert f"more than the benchmark's {len(rows)}" in far_text and "more judged" not in far_text
    zero = run("judge", str(bench), "-c", "slice", "--plan", "1", "--target-width", "0",
               env=env, timeout=300)  # fmt: skip
    assert zero.returncode == 2 and "--target-width: a width above 0" in zero.stderr
    write(start | chosen)  # the plan's queries judged (their labels from the qrels)
    args = ("eval", str(bench), "-c", "slice", "--estimate", "--plan-file", str(out), "--json",
            "--no-throughput", "--no-record")  # fmt: skip
    estimated = run(*args, env=env, timeout=300)
    assert estimated.returncode == 0, estimated.stderr
    entry = json.loads(estimated.stdout)["metrics_ci"]["ndcg@10"]
    assert entry["n_labeled"] == START + PLANNED and entry["method"] == "cross-ppi++"
