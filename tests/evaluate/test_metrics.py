"""Metrics: hand-computed cases, and agreement with pytrec_eval itself."""

from __future__ import annotations

import math
import random

import pytest
import pytrec_eval

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate import compute_metrics, parse_metric
from ragsonde.evaluate.metrics import METRICS, metric_names


def test_hand_computed_binary_case():
    # q1: relevant d1, d3; ranking d1 d2 d3 d4.
    qrels = {"q1": {"d1": 1, "d3": 1}}
    run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.7, "d4": 0.6}}
    means, per_q = compute_metrics(
        ["precision@2", "recall@2", "recall@3", "mrr", "mrr@1", "hit_rate@1", "map@3", "ndcg@3"],
        qrels,
        run,
    )
    assert means["precision@2"] == pytest.approx(0.5)
    assert means["recall@2"] == pytest.approx(0.5)
    assert means["recall@3"] == pytest.approx(1.0)
    assert means["mrr"] == pytest.approx(1.0)
    assert means["mrr@1"] == pytest.approx(1.0)
    assert means["hit_rate@1"] == pytest.approx(1.0)
    assert means["map@3"] == pytest.approx((1 / 1 + 2 / 3) / 2)
    dcg = 1 / math.log2(2) + 1 / math.log2(4)
    idcg = 1 / math.log2(2) + 1 / math.log2(3)
    assert means["ndcg@3"] == pytest.approx(dcg / idcg)
    assert per_q["q1"]["ndcg@3"] == pytest.approx(dcg / idcg)


def test_graded_relevance_uses_linear_gain():
    qrels = {"q": {"a": 2, "b": 1}}
    run = {"q": {"b": 0.9, "a": 0.8}}
    means, _ = compute_metrics(["ndcg@2"], qrels, run)
    dcg = 1 / math.log2(2) + 2 / math.log2(3)
    idcg = 2 / math.log2(2) + 1 / math.log2(3)
    assert means["ndcg@2"] == pytest.approx(dcg / idcg)


def test_empty_results_and_no_relevant_retrieved_score_zero_and_count_in_the_mean():
    qrels = {"hit": {"a": 1}, "miss": {"z": 1}, "empty": {"y": 1}}
    run = {"hit": {"a": 0.9}, "miss": {"b": 0.9, "c": 0.5}}  # "empty" retrieved nothing
    means, per_q = compute_metrics(["ndcg@10", "mrr", "recall@10", "hit_rate@10"], qrels, run)
    assert per_q["miss"] == {"ndcg@10": 0.0, "mrr": 0.0, "recall@10": 0.0, "hit_rate@10": 0.0}
    assert per_q["empty"]["ndcg@10"] == 0.0
    assert means["ndcg@10"] == pytest.approx(1 / 3)
    assert means["hit_rate@10"] == pytest.approx(1 / 3)


def test_every_metric_matches_pytrec_eval_on_a_random_run():
    rng = random.Random(7)
    docs = [f"d{i}" for i in range(60)]
    qrels = {
        f"q{q}": {d: rng.choice([1, 1, 2]) for d in rng.sample(docs, rng.randint(1, 5))}
        for q in range(40)
    }
    run = {q: {d: rng.random() for d in rng.sample(docs, 30)} for q in qrels}
    ks = [1, 3, 5, 10]
    means, per_q = compute_metrics(metric_names(ks), qrels, run)
    trec_names = {
        "ndcg": "ndcg_cut_{k}",
        "recall": "recall_{k}",
        "precision": "P_{k}",
        "map": "map_cut_{k}",
        "hit_rate": "success_{k}",
    }
    cut = ",".join(map(str, ks))
    measures = {f"{m}.{cut}" for m in ("ndcg_cut", "recall", "P", "map_cut", "success")}
    measures.add("recip_rank")
    ref = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    for q in qrels:
        for family, pattern in trec_names.items():
            for k in ks:
                assert per_q[q][f"{family}@{k}"] == pytest.approx(ref[q][pattern.format(k=k)])
        assert per_q[q]["mrr"] == pytest.approx(ref[q]["recip_rank"])
    assert means["ndcg@10"] == pytest.approx(sum(r["ndcg_cut_10"] for r in ref.values()) / 40)


def test_unknown_metric_lists_the_supported_ones():
    with pytest.raises(QueryValidationError) as e:
        parse_metric("ndgc@10")
    for family in METRICS:
        assert family in e.value.message
    with pytest.raises(QueryValidationError, match="needs a cutoff"):
        parse_metric("recall")
    assert parse_metric("NDCG@10") == ("ndcg", 10)
