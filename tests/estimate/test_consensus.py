"""The consensus predictor: its two pure parts by hand, and the predictor itself on the real
model and an embedded collection with dense and BM25 vectors (known truth: off-topic questions
are predicted weaker than the sample's own questions), through ``eval --estimate``'s path."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.estimate import estimate_report
from ragsonde.estimate.predictors import Consensus, pseudo_ndcg, rank_average
from ragsonde.evaluate import EvalOptions, evaluate
from ragsonde.evaluate.datasets import load_benchmark
from ragsonde.models.params import SearchParams
from ragsonde.models.prediction import PredictedQuery, Predictor
from ragsonde.samples import robotics_benchmark
from ragsonde.workspace import Workspace
from tests.support import robotics_hybrid
from tests.traffic.test_predictor import OFF_TOPIC


def test_pseudo_ndcg_by_hand() -> None:
    # votes: a 1 + 1/2, b 1/2 + 1, c 1/3, d 1/3 (top 3 of each reference, 1 / (rank + 1))
    got = pseudo_ndcg(["a", "b", "c"], [["a", "b", "c"], ["b", "a", "d"]])
    dcg = 1.5 / math.log2(2) + 1.5 / math.log2(3) + (1 / 3) / math.log2(4)
    ideal = 1.5 + 1.5 / math.log2(3) + (1 / 3) / math.log2(4) + (1 / 3) / math.log2(5)
    assert got == pytest.approx(dcg / ideal, abs=1e-12)
    assert pseudo_ndcg(["x", "y"], [["a", "b"]]) == 0.0  # no vote for any of its hits
    assert pseudo_ndcg(["a", "b"], [["a", "b"], ["a", "b"]]) == pytest.approx(1.0)
    assert pseudo_ndcg(["a"], []) == 0.0


def test_rank_average_by_hand() -> None:
    # column 1: ranks 1, 2, 3 of 3; column 2: a tie at rank 1.5 of 2, and one missing (1/2)
    got = rank_average([[1.0, 2.0, 3.0], [3.0, None, 3.0]])
    assert got == pytest.approx([(1 / 6 + 1 / 2) / 2, 1 / 2, (5 / 6 + 1 / 2) / 2])
    assert rank_average([]) == []


@pytest.fixture(scope="module")
def hybrid_home(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxEmbedder) -> Path:
    return robotics_hybrid(tmp_path_factory.mktemp("consensus"), embedder)


@pytest.mark.slow
def test_off_topic_questions_are_predicted_weaker(
    hybrid_home: Path, embedder: OnnxEmbedder
) -> None:
    from sklearn.metrics import roc_auc_score

    inside = [
        PredictedQuery(query_id=q.query_id, text=q.text)
        for q in load_benchmark(robotics_benchmark()).queries
    ]
    outside = [PredictedQuery(query_id=f"off{i}", text=t) for i, t in enumerate(OFF_TOPIC)]
    with Workspace(Settings(home=hybrid_home, collection="robotics"), embedder=embedder) as ws:
        predictor = Consensus(ws, SearchParams(mode="hybrid"), collection="robotics")
        assert isinstance(predictor, Predictor)
        got = predictor.predict(inside + outside)
    assert [p.query_id for p in got] == [q.query_id for q in inside + outside]
    assert all(p.source == "consensus" and not p.signals for p in got)
    values = [p.predicted for p in got]
    assert all(v is not None and 0.0 < v < 1.0 for v in values)
    auc = roc_auc_score([True] * len(inside) + [False] * len(outside), values)
    # 0.89 measured (chance: 0.5); the traffic room's calibrated predicted alone reaches 0.9
    # here, but the consensus is built for ranking in-domain queries, not for spotting others
    assert auc >= 0.85, f"in-domain vs off-topic AUC {auc:.3f}"


@pytest.mark.slow
def test_eval_estimates_the_benchmark_mean_with_the_consensus(
    hybrid_home: Path, embedder: OnnxEmbedder, tmp_path: Path
) -> None:
    rows = [json.loads(line) for line in robotics_benchmark().read_text().splitlines() if line]
    for row in rows[20:]:
        del row["relevant"]
    bench = tmp_path / "partly.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    settings = Settings(home=hybrid_home, collection="robotics")
    with Workspace(settings, embedder=embedder) as ws:
        for estimand in ("distribution", "benchmark"):
            options = EvalOptions(
                k=[10], throughput=False, estimate=True, predictor="consensus", estimand=estimand
            )
            report = estimate_report(evaluate(bench, options, ws, record=False), options,
                                     workspace=ws)  # fmt: skip
            assert report.metrics_ci is not None
            est = report.metrics_ci["ndcg@10"]
            assert est.method == "ppi++" and est.sources == ["consensus"]
            assert (est.n_labeled, est.n_predicted) == (20, len(rows) - 20)
            assert est.low <= est.estimate <= est.high
            assert ("finite population" in est.note) is (estimand == "benchmark")
