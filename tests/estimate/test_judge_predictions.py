"""An LLM judge's labels enter an estimate through the prediction side only, never as gold: a
judged benchmark file (labels with provenance, as ``ragsonde judge --agreement`` writes them)
on the sample robotics docs ingested with the real model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragsonde.config import Settings
from ragsonde.estimate import estimate_report
from ragsonde.evaluate import EvalOptions, EvalReport, evaluate
from ragsonde.labels import BenchmarkEntry, Label, write_entries
from ragsonde.samples import robotics_benchmark
from ragsonde.workspace import Workspace

pytestmark = pytest.mark.slow
LABELLED = 20
JUDGE = "local:test-judge"
#: A document the judge calls perfect for every labelled query, which no person listed.
WRONG = "docking"


def _rows() -> list[dict[str, Any]]:
    return [json.loads(x) for x in robotics_benchmark().read_text().splitlines() if x]


def _judged(folder: Path) -> Path:
    """Every query judged by the LLM (its grade 2 on the relevant documents: a judge of known
    quality), people's labels on the first LABELLED; ``relevant`` as ``judge`` writes it with
    its default ``use``: human and LLM positives together. On the labelled queries the judge
    also calls WRONG perfect, which must not reach the gold."""
    entries = []
    for i, row in enumerate(_rows()):
        llm = {d: 2 for d in row["relevant"]}
        labels = [Label(id=d, grade=g, source="llm", judge=JUDGE) for d, g in llm.items()]
        relevant = dict(llm)
        if i < LABELLED:
            labels += [Label(id=d, grade=1, source="human", judge="me") for d in row["relevant"]]
            if WRONG not in row["relevant"]:
                labels.append(Label(id=WRONG, grade=3, source="llm", judge=JUDGE))
                relevant[WRONG] = 3
        entries.append(BenchmarkEntry(query_id=row["query_id"], query=row["query"],
                                      relevant=relevant, labels=labels))  # fmt: skip
    path = folder / "judged.jsonl"
    write_entries(path, entries)
    return path


def _human_only(folder: Path) -> Path:
    path = folder / "human.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _rows()[:LABELLED]))
    return path


def _run(bench: Path | str, options: EvalOptions, home: Path, embedder: Any) -> EvalReport:
    with Workspace(Settings(home=home, collection="robotics"), embedder=embedder) as ws:
        return evaluate(bench, options, ws, record=False)


def test_the_judges_labels_predict_and_never_serve_as_gold(
    sample_home: Path, embedder: Any, tmp_path: Path, validate_report: Callable[..., None]
) -> None:
    options = EvalOptions(k=[10], throughput=False, estimate=True, predictor="judge")
    report = estimate_report(_run(_judged(tmp_path), options, sample_home, embedder), options)
    validate_report(report.model_dump(mode="json"))
    # gold: the people's labels alone (the LLM-only rows are unlabelled, WRONG is not gold)
    labelled = {q for q, row in report.per_query.items() if row.relevant}
    assert len(labelled) == LABELLED and len(report.per_query) == 46
    people = {r["query_id"]: set(r["relevant"]) for r in _rows()[:LABELLED]}
    assert {q: set(report.per_query[q].relevant) for q in labelled} == people
    plain = EvalOptions(k=[10], throughput=False)
    human = _run(_human_only(tmp_path), plain, sample_home, embedder)
    for name, value in human.metrics.items():
        assert report.metrics[name] == pytest.approx(value, abs=1e-9), name
    # prediction: the judge's per-query metrics, fitted to the gold on the labelled queries
    est = (report.metrics_ci or {})["ndcg@10"]
    assert est.sources == [f"judge:{JUDGE}"] and est.method == "cross-ppi++"
    assert (est.n_labeled, est.n_predicted) == (LABELLED, 46 - LABELLED)
    assert est.classical.estimate == pytest.approx(human.metrics["ndcg@10"], abs=1e-6)  # rounded


def test_a_judge_that_agrees_with_people_narrows_the_interval(
    slice_report: EvalReport, estimate_slice: Path, estimate_home: Path, embedder: Any,
    tmp_path: Path,
) -> None:  # fmt: skip
    """The SciFact slice (120 queries), 40 of them labelled by people; the judge grades the
    qrels' documents 2 on every query (a judge of known, perfect quality)."""
    grades: dict[str, dict[str, int]] = {}
    for line in (estimate_slice / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        q, d, g = line.split("\t")
        grades.setdefault(q, {})[d] = int(g)
    texts = {q["_id"]: q["text"] for q in map(json.loads, (estimate_slice / "queries.jsonl")
                                               .read_text().splitlines())}  # fmt: skip
    ids = sorted(slice_report.per_query)
    entries = []
    for i, q in enumerate(ids):
        labels = [Label(id=d, grade=2, source="llm", judge=JUDGE) for d in grades[q]]
        if i % 3 == 0:  # every third query: people's labels too
            labels += [Label(id=d, grade=g, source="human", judge="qrels") for d, g in
                       grades[q].items()]  # fmt: skip
        entries.append(BenchmarkEntry(query_id=q, query=texts[q], labels=labels,
                                      relevant=dict(grades[q])))  # fmt: skip
    bench = tmp_path / "judged.jsonl"
    write_entries(bench, entries)
    options = EvalOptions(k=[10], throughput=False, estimate=True, predictor="judge")
    with Workspace(Settings(home=estimate_home, collection="slice"), embedder=embedder) as ws:
        report = estimate_report(evaluate(bench, options, ws, record=False), options)
    est = (report.metrics_ci or {})["ndcg@10"]
    assert (est.n_labeled, est.n_predicted) == (40, 80) and est.method == "cross-ppi++"
    truth = slice_report.metrics["ndcg@10"]  # all 120 queries, people's labels
    assert est.low <= truth <= est.high
    width, classical = est.high - est.low, est.classical.high - est.classical.low
    assert width < 0.8 * classical, (width, classical)


def test_without_llm_labels_the_judge_predictor_says_how_to_get_them(
    sample_home: Path, embedder: Any, tmp_path: Path
) -> None:
    from ragsonde.errors import QueryValidationError

    rows = _rows()
    for row in rows[LABELLED:]:
        del row["relevant"]
    bench = tmp_path / "partly.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    options = EvalOptions(k=[10], throughput=False, estimate=True, predictor="judge")
    report = _run(bench, options, sample_home, embedder)
    with pytest.raises(QueryValidationError, match="ragsonde judge"):
        estimate_report(report, options)


def test_a_comparison_takes_the_judges_predictions_and_the_peoples_gold(
    sample_home: Path, embedder: Any, tmp_path: Path
) -> None:
    from ragsonde.estimate import estimate_comparison
    from ragsonde.evaluate.compare import compare_reports

    bench = _judged(tmp_path)
    a, b = (
        _run(bench, EvalOptions(k=[10], throughput=False, estimate=True, **extra), sample_home,
             embedder)
        for extra in ({}, {"score_threshold": 0.45})
    )  # fmt: skip
    m = estimate_comparison(compare_reports(a, b, ["ndcg@10"]), a, b, predictor="judge")
    ndcg = m.metric("ndcg@10")
    assert ndcg.ppi is not None and ndcg.ppi.sources == [f"judge:{JUDGE}"]
    assert (ndcg.ppi.n_labeled, ndcg.ppi.n_predicted) == (LABELLED, 46 - LABELLED)
    assert m.n_queries == LABELLED  # the paired tests: the people's labels only
