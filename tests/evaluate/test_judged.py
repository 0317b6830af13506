"""Judged coverage: judged@k, scoring over judged hits only, and the report's low-coverage warning."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import pytrec_eval

from ragsonde.config import Settings
from ragsonde.evaluate import EvalOptions, compute_metrics
from ragsonde.evaluate.html import render_html_report
from ragsonde.samples import robotics_benchmark
from tests.evaluate.reports import make_report
from tests.support import evaluate_in

# q: a (grade 2) and b (grade 0, judged not relevant) are labelled; x and y never were.
QRELS = {"q": {"a": 2, "b": 0}}
RUN = {"q": {"x": 0.9, "a": 0.8, "y": 0.7, "b": 0.6}}


def test_judged_at_k_is_the_labelled_share_of_the_top_k():
    means, _ = compute_metrics(["judged@1", "judged@2", "judged@4", "judged@10"], QRELS, RUN)
    # top 1: x (no label); top 2: x a; top 4: x a y b; @10: the 4 returned (not 10, unlike P@10).
    assert means == {"judged@1": 0.0, "judged@2": 0.5, "judged@4": 0.5, "judged@10": 0.5}


def test_judged_only_drops_unjudged_hits_before_ranking():
    names = ["precision@1", "mrr", "ndcg@2", "judged@2"]
    full, _ = compute_metrics(names, QRELS, RUN)
    condensed, _ = compute_metrics(names, QRELS, RUN, judged_only=True)
    # Full list: x a y b. Condensed: a b.
    assert full["precision@1"] == 0.0 and condensed["precision@1"] == 1.0
    assert full["mrr"] == pytest.approx(0.5) and condensed["mrr"] == 1.0
    assert full["ndcg@2"] == pytest.approx((2 / math.log2(3)) / 2)
    assert condensed["ndcg@2"] == 1.0
    assert condensed["judged@2"] == full["judged@2"] == 0.5  # coverage is never condensed


def test_judged_only_matches_trec_eval_minus_j():
    qrels = {"q1": {"d1": 1, "d2": 0, "d5": 2}, "q2": {"d3": 1, "d9": 0}}
    run = {"q1": {f"d{i}": 1 - i / 10 for i in range(8)}, "q2": {f"d{i}": i / 10 for i in range(8)}}
    _, per_q = compute_metrics(["ndcg@5", "precision@5"], qrels, run, judged_only=True)
    ref = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg_cut.5", "P.5"}, judged_docs_only_flag=True
    ).evaluate(run)
    for q in qrels:
        assert per_q[q]["ndcg@5"] == pytest.approx(ref[q]["ndcg_cut_5"])
        assert per_q[q]["precision@5"] == pytest.approx(ref[q]["P_5"])


def _pooled(report):
    return report.model_copy(
        update={"benchmark": report.benchmark.model_copy(update={"pooled": True})}
    )


def test_html_report_warns_only_when_coverage_is_low_on_a_pooled_benchmark():
    low = make_report(
        {"ndcg@10": np.array([0.5, 0.7]), "judged@10": np.array([0.1, 0.3])}, ["a", "b"]
    )
    # Sparse labels (no judged pools): low judged@10 is expected, explained, never a banner.
    assert low.low_coverage() is None
    page = render_html_report(low)
    assert 'id="coverage-warning"' not in page and "lower bound" not in page
    assert 'id="judged-note"' in page and "standard assumption" in page
    pooled = _pooled(low)
    assert pooled.low_coverage() == (10, pytest.approx(0.2))
    assert 'id="coverage-warning"' in render_html_report(pooled)
    high = _pooled(
        make_report(
            {"ndcg@10": np.array([0.5, 0.7]), "judged@10": np.array([0.9, 0.7])}, ["a", "b"]
        )
    )
    assert high.low_coverage() is None
    assert 'id="coverage-warning"' not in render_html_report(high)


def test_a_benchmark_is_pooled_when_its_rows_carry_judgments(tmp_path):
    from ragsonde.evaluate.datasets import load_benchmark

    rows = {
        "known-item": {"query": "q", "relevant": {"a": 3}, "labels": [{"source": "generator"}]},
        "judged-zero": {"query": "q", "relevant": {"a": 2, "b": 0}},
        "llm-labels": {"query": "q", "relevant": {"a": 2}, "labels": [{"source": "llm"}]},
    }
    pooled = {}
    for name, row in rows.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(json.dumps(row) + "\n", encoding="utf-8")
        pooled[name] = load_benchmark(str(path)).pooled
    assert pooled == {"known-item": False, "judged-zero": True, "llm-labels": True}


@pytest.mark.slow
def test_a_real_evaluation_reports_coverage_and_scores_judged_only(sample_home, embedder, tmp_path):
    settings = Settings(home=sample_home, collection="robotics")
    opts = {"k": [1, 10], "throughput": False}
    plain = evaluate_in(
        robotics_benchmark(), settings=settings, embedder=embedder, options=EvalOptions(**opts)
    )
    # The sample benchmark labels one document per query: most of the top 10 is unjudged.
    assert 0 < plain.metrics["judged@1"] <= 1
    assert plain.metrics["judged@10"] < 0.5
    # ... which is the standard assumption of sparse labels, not a reason to warn.
    assert not plain.benchmark.pooled
    assert not any("judged@10" in w for w in plain.warnings)
    from ragsonde.evaluate.coverage import coverage_note

    assert "sparse" in (coverage_note(plain) or "")
    assert json.loads(plain.model_dump_json())["judged_only"] is False
    condensed = evaluate_in(
        robotics_benchmark(),
        settings=settings,
        embedder=embedder,
        options=EvalOptions(**opts, judged_only=True),
    )
    assert condensed.judged_only
    assert condensed.metrics["judged@10"] == plain.metrics["judged@10"]
    # Every label here is relevant, so the condensed list holds only relevant hits: the first
    # is at rank 1 whenever any was found (MRR = hit rate), and P@10 (over k) does not move.
    assert condensed.metrics["mrr"] == pytest.approx(plain.metrics["hit_rate@10"])
    assert condensed.metrics["mrr"] > plain.metrics["mrr"]
    assert condensed.metrics["precision@10"] == pytest.approx(plain.metrics["precision@10"])


def test_a_query_with_no_hits_scores_zero_judged_included():
    from ragsonde.evaluate.metrics import compute_metrics

    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 2.0, "x": 1.0}, "q2": {}}
    means, per_query = compute_metrics(["judged@10", "ndcg@10"], qrels, run)
    assert per_query["q2"] == {"judged@10": 0.0, "ndcg@10": 0.0}
    assert per_query["q1"]["judged@10"] == 0.5 and per_query["q1"]["ndcg@10"] == 1.0
    assert means["judged@10"] == 0.25
    _, condensed = compute_metrics(["ndcg@10"], qrels, run, judged_only=True)
    assert condensed["q2"]["ndcg@10"] == 0.0 and condensed["q1"]["ndcg@10"] == 1.0


def test_a_comparison_warns_when_the_pools_favour_one_side():
    from ragsonde.evaluate.compare import compare_reports

    rng = np.random.default_rng(0)
    ndcg = rng.uniform(0, 1, 50)
    a = make_report({"ndcg@10": ndcg, "judged@10": np.full(50, 0.9)})
    b = make_report({"ndcg@10": ndcg * 0.9, "judged@10": np.full(50, 0.4)}, name="B")
    # Sparse labels: an unlabelled hit is not relevant on both sides alike; nothing to say.
    assert compare_reports(a, b, ["ndcg@10"], n_resamples=200).warnings == []
    (w,) = compare_reports(_pooled(a), _pooled(b), ["ndcg@10"], n_resamples=200).warnings
    assert "0.90 for A and 0.40 for B" in w and "more of A's hits" in w
    close = make_report({"ndcg@10": ndcg, "judged@10": np.full(50, 0.85)}, name="C")
    assert compare_reports(_pooled(a), _pooled(close), ["ndcg@10"], n_resamples=200).warnings == []
