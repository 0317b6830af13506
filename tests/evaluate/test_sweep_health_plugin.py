"""Threshold calibration, index health, and the pytest plugin for users' own suites."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from ragsonde.config import Settings
from ragsonde.evaluate import EvalOptions
from ragsonde.evaluate.html import render_html_report
from ragsonde.evaluate.sweep import sweep_thresholds
from ragsonde.samples import robotics_benchmark
from tests.support import evaluate_in, home_env


def test_sweep_by_hand():
    run = {"q1": {"a": 0.9, "b": 0.6, "c": 0.3}, "q2": {"x": 0.4, "y": 0.2}}
    qrels = {"q1": {"a": 1, "c": 1}, "q2": {"y": 1}}
    sweep = sweep_thresholds(run, qrels, thresholds=[0.0, 0.5, 0.95], max_recall_loss=0.5)
    out = sweep.model_dump()
    t0, t5, t95 = out["rows"]
    # t=0: q1 keeps a,b,c (P 2/3, R 1); q2 keeps x,y (P 1/2, R 1)
    assert t0["precision"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert t0["recall"] == pytest.approx(1.0)
    assert t0["f1"] == pytest.approx((0.8 + 2 / 3) / 2)
    # t=0.5: q1 keeps a,b (P 1/2, R 1/2, F1 1/2); q2 keeps nothing
    assert (t5["precision"], t5["recall"], t5["no_result_share"]) == (0.5, 0.25, 0.5)
    assert t5["f1"] == pytest.approx(0.25)
    assert t95["no_result_share"] == 1.0 and t95["recall"] == 0.0
    assert out["best_f1"]["threshold"] == 0.0
    assert out["recall_preserving"]["threshold"] == 0.0  # 0.25 < 1.0 * (1 - 0.5)
    assert out["recommended_setting"] == "score_threshold=0"


@pytest.mark.slow
def test_sweep_and_index_health_on_the_sample(sample_home, embedder):
    report = evaluate_in(
        robotics_benchmark(),
        settings=Settings(home=sample_home, collection="robotics"),
        embedder=embedder,
        options=EvalOptions(sweep_thresholds=True, ann_vs_exact=True, throughput=False),
    )
    doc = report.model_dump(mode="json")
    sweep = doc["threshold_sweep"]
    assert sweep is not None and len(sweep["rows"]) == 41
    empty = [r["no_result_share"] for r in sweep["rows"]]
    recall = [r["recall"] for r in sweep["rows"]]
    assert empty == sorted(empty) and recall == sorted(recall, reverse=True)
    assert 0.0 < sweep["recall_preserving"]["threshold"] < 1.0
    assert sweep["recall_preserving"]["recall"] >= recall[0] * 0.95 - 1e-9
    health = doc["index_health"]
    assert health is not None and health["recall_vs_exact"]["recall@10"] >= 0.95
    assert health["exact_search_ms"]["p50"] > 0
    # 50-odd chunks are under Qdrant's indexing threshold: no graph, every search scans them all
    # (the report said "HNSW", and "HNSW vs exact" for a comparison of a scan with itself)
    assert doc["search"]["index"].startswith("full scan (no HNSW graph")
    assert health["note"].startswith("chunk-level overlap of the top k, full scan")
    assert health["recall_vs_exact"]["recall@10"] == 1.0
    html = render_html_report(report)
    assert "Score threshold calibration" in html and sweep["recommended_setting"] in html


@pytest.mark.slow
def test_pytest_plugin_fails_a_users_suite_on_a_regression(sample_home, tmp_path):
    (tmp_path / "test_user.py").write_text(
        textwrap.dedent(
            f"""
            BENCH = {str(robotics_benchmark())!r}

            def test_good(assert_retrieval):
                report = assert_retrieval(BENCH, ["hit_rate@10>=0.5"], collection="robotics")
                assert report.n_queries == 46

            def test_too_strict(assert_retrieval):
                assert_retrieval(BENCH, ["ndcg@10>=0.999"], collection="robotics")
            """
        )
    )
    env = home_env(sample_home)  # this checkout's code, not the installed one
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
    )
    assert out.returncode == 1, out.stdout + out.stderr
    assert "1 failed, 1 passed" in out.stdout
    assert "retrieval gates failed" in out.stdout and "ndcg@10>=0.999" in out.stdout
