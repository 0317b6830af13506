"""``eval --estimate`` on a partly labelled benchmark: the sample robotics docs ingested with
the real model, the sample benchmark with the labels of most rows removed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ragsonde.config import Settings
from ragsonde.estimate import estimate_comparison, estimate_report, estimating
from ragsonde.evaluate import EvalOptions, EvalReport, evaluate
from ragsonde.evaluate.gates import parse_gate
from ragsonde.history import HistoryStore
from ragsonde.samples import robotics_benchmark
from ragsonde.workspace import Workspace
from tests.estimate.support import partly_labelled
from tests.support import home_env, run

pytestmark = pytest.mark.slow
LABELLED = 20


def _partly_labelled(tmp_path: Path) -> Path:
    return partly_labelled(tmp_path / "partly.jsonl", LABELLED)


def _classical(values: np.ndarray) -> tuple[float, float]:
    """scipy's one-sample t interval (mean ± t(n - 1) · s / √n, s the sample sd: Student's
    t, as the estimates take for small samples), cut to the metric's range [0, 1]."""
    from scipy import stats

    ci = stats.ttest_1samp(values, 0.0).confidence_interval(0.95)
    return max(0.0, float(ci.low)), min(1.0, float(ci.high))


def _run(bench: Path, options: EvalOptions, home: Path, embedder: Any, **kw: Any) -> EvalReport:
    """``evaluate`` on the sample collection (not recorded unless ``history`` is given)."""
    with Workspace(Settings(home=home, collection="robotics"), embedder=embedder) as ws:
        return evaluate(bench, options, ws, record="history" in kw, **kw)


def test_every_metric_is_estimated_from_labelled_and_predicted_queries(
    sample_home: Path, embedder: Any, tmp_path: Path, validate_report: Callable[..., None]
) -> None:
    bench = _partly_labelled(tmp_path)
    options = EvalOptions(k=[1, 10], throughput=False, estimate=True)
    plain = _run(bench, options, sample_home, embedder)
    assert plain.metrics_ci is None  # evaluate() keeps the rows; the extend step estimates
    history = tmp_path / "history.sqlite"
    report = _run(
        bench, options, sample_home, embedder, history=history, extend=estimating(options)
    )
    assert report.history_run is not None  # unlabelled rows do not stop the run's recording
    validate_report(report.model_dump(mode="json"))
    with HistoryStore(history) as hs:  # recorded after the estimate: its intervals with it
        recorded = hs.get(report.history_run).report
    assert recorded.metrics_ci == report.metrics_ci
    assert report.metrics_ci is not None and set(report.metrics_ci) == set(report.metrics)
    labelled = [row for row in report.per_query.values() if row.relevant]
    assert len(labelled) == LABELLED and len(report.per_query) == 46
    gold = np.asarray([row.metrics["ndcg@10"] for row in labelled])
    # metrics stay the mean over the labelled rows; the classical interval is theirs
    assert report.metrics["ndcg@10"] == pytest.approx(gold.mean(), abs=1e-6)
    est = report.metrics_ci["ndcg@10"]
    assert (est.classical.low, est.classical.high) == pytest.approx(_classical(gold), abs=1e-5)
    assert (est.n_labeled, est.n_predicted) == (LABELLED, 46 - LABELLED)
    assert est.method == "cross-ppi++" and est.sources == ["scores"]
    assert est.low <= est.estimate <= est.high
    # a gate on an estimate tests the interval's end, and says so
    threshold = round((est.low + est.estimate) / 2, 4)
    gate = parse_gate(f"ndcg@10>={threshold}").evaluate(report)
    assert est.estimate >= threshold
    assert not gate.passed and gate.value == est.low and "lower end" in (gate.on or "")
    assert parse_gate(f"ndcg@10<={est.high + 0.001}").evaluate(report).passed


def test_without_predictions_the_estimate_is_classical_and_says_so(
    sample_home: Path, embedder: Any, tmp_path: Path
) -> None:
    options = EvalOptions(k=[10], throughput=False, estimate=True, predictor="none")
    report = _run(_partly_labelled(tmp_path), options, sample_home, embedder)
    est = (estimate_report(report, options).metrics_ci or {})["ndcg@10"]
    assert est.method == "classical" and est.n_predicted == 0 and "no predictions" in est.note
    assert (est.low, est.high) == (est.classical.low, est.classical.high)


def test_the_cli_shows_the_interval_and_json_carries_it(sample_home: Path, tmp_path: Path) -> None:
    bench = _partly_labelled(tmp_path)
    env = home_env(sample_home)
    args = ("eval", str(bench), "-c", "robotics", "--estimate", "--no-throughput", "--no-record")
    shown = run(*args, env=env, timeout=300)
    assert shown.returncode == 0, shown.stderr
    assert "95 % interval" in shown.stdout and "cross-ppi++" in shown.stdout
    # the first table's means are over the labelled queries, and its title says so (it said
    # "46 queries")
    said = " ".join(shown.stdout.split())
    assert f"means of {LABELLED} labelled of 46 queries" in said
    assert "the first table's metrics are the means of the labelled queries alone" in said
    done = run(*args, "--json", "--gate", "ndcg@10>=0.99", env=env, timeout=300)
    assert done.returncode == 1  # no 20 labels put the lower end that high
    doc = json.loads(done.stdout)
    entry = doc["metrics_ci"]["ndcg@10"]
    assert {"estimate", "low", "high", "n_labeled", "n_predicted", "method"} <= set(entry)
    assert entry["classical"]["low"] <= entry["classical"]["high"]
    assert doc["gates"][0]["on"].startswith("the lower end")


def test_each_predictor_is_named_in_the_estimates_sources(
    sample_home: Path, tmp_path: Path
) -> None:
    """A saved report, ``history diff`` and the web page tell the predictors apart: each
    estimate's ``sources`` is the name ``--predictor`` gave (both were ``signals`` before)."""
    bench = _partly_labelled(tmp_path)
    args = ("eval", str(bench), "-c", "robotics", "--estimate", "--no-throughput", "--no-record")
    for predictor in ("scores", "traffic", "consensus"):
        done = run(
            *args, "--json", "--predictor", predictor, env=home_env(sample_home), timeout=300
        )
        assert done.returncode == 0, done.stderr
        entry = json.loads(done.stdout)["metrics_ci"]["ndcg@10"]
        assert entry["sources"] == [predictor] and entry["n_predicted"] == 46 - LABELLED


def test_the_html_report_draws_each_interval(
    sample_home: Path, embedder: Any, tmp_path: Path
) -> None:
    from ragsonde.evaluate.html import write_html_report

    options = EvalOptions(k=[10], throughput=False, estimate=True, gates=["ndcg@10>=0.1"])
    report = _run(_partly_labelled(tmp_path), options, sample_home, embedder)
    page = tmp_path / "report.html"
    write_html_report(estimate_report(report, options), page)
    html = page.read_text()
    est = (report.metrics_ci or {})["ndcg@10"]
    assert 'id="estimates"' in html and f"[{est.low:.4f}, {est.high:.4f}]" in html
    assert html.count('aria-label="ndcg@10 interval"') == 1
    assert "lower end of the 95 % interval" in html


def test_compare_estimates_the_paired_difference_over_every_query(
    sample_home: Path, embedder: Any, tmp_path: Path
) -> None:
    from ragsonde.evaluate.compare import compare_reports

    bench = _partly_labelled(tmp_path)
    a, b = (
        _run(bench, EvalOptions(k=[10], throughput=False, estimate=True, **extra), sample_home,
             embedder)
        for extra in ({}, {"score_threshold": 0.45})
    )  # fmt: skip
    plain = compare_reports(a, b, ["ndcg@10"])
    assert plain.metric("ndcg@10").ppi is None  # the evaluation room's tests alone
    result = estimate_comparison(plain, a, b).metric("ndcg@10")
    gold = [q for q, row in a.per_query.items() if row.relevant]
    delta = np.mean([b.per_query[q].metrics["ndcg@10"] - a.per_query[q].metrics["ndcg@10"]
                     for q in gold])  # fmt: skip
    assert result.delta == pytest.approx(float(delta), abs=1e-6)  # the tests: labelled only
    assert result.ppi is not None and result.ppi.method == "cross-ppi++"
    assert (result.ppi.n_labeled, result.ppi.n_predicted) == (LABELLED, 46 - LABELLED)
    assert result.ppi.classical.estimate == pytest.approx(float(delta), abs=1e-9)
    assert result.ppi.low <= result.ppi.estimate <= result.ppi.high


def test_explain_and_estimate_in_one_run_recorded_with_both(
    sample_home: Path, tmp_path: Path
) -> None:
    """``--explain --estimate``: the ladder and the estimate both run before the report is timed
    and recorded, so the recorded run (``history show --json``) carries the intervals and the
    gates' verdicts on them."""
    bench, history = _partly_labelled(tmp_path), tmp_path / "history.sqlite"
    env = home_env(sample_home)
    done = run("eval", str(bench), "-c", "robotics", "--estimate", "--explain", "--json",
               "--no-throughput", "--history", str(history), "--gate", "ndcg@10>=0.01",
               env=env, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["misses"] is not None and doc["metrics_ci"]["ndcg@10"]["n_labeled"] == LABELLED
    assert doc["gates"][0]["on"].startswith("the lower end")
    shown = run("history", "show", "last", "--json", "--history", str(history), env=env)
    assert shown.returncode == 0, shown.stderr
    recorded = json.loads(shown.stdout)["run"]
    assert recorded["metrics_ci"] == doc["metrics_ci"] and recorded["passed"]
    assert recorded["seconds"] == doc["seconds"]


def test_history_diff_estimates_the_paired_difference_of_two_recorded_runs(
    sample_home: Path, embedder: Any, tmp_path: Path
) -> None:
    """Two estimated runs recorded, then ``history diff``: each metric's PPI++ difference over
    the shared queries, from the per-query values the history kept (the same as ``compare``'s
    on the reports in memory), "significant" only when its interval excludes 0."""
    from ragsonde.evaluate.compare import compare_reports

    bench, history = _partly_labelled(tmp_path), tmp_path / "history.sqlite"
    reports = []
    for extra in ({}, {"score_threshold": 0.6}):  # B loses most hits: a significant drop
        options = EvalOptions(k=[10], throughput=False, estimate=True, **extra)
        reports.append(_run(bench, options, sample_home, embedder, history=history,
                            extend=estimating(options)))  # fmt: skip
    a, b = reports
    h, env = ("--history", str(history)), home_env(sample_home)
    done = run("history", "diff", "1", "2", "-m", "ndcg@10", "--json", *h, env=env)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)["metrics"][0]["ppi"]
    want = estimate_comparison(compare_reports(a, b, ["ndcg@10"]), a, b).metric("ndcg@10").ppi
    assert want is not None and got == want.model_dump(mode="json")
    gold = [q for q, row in a.per_query.items() if row.relevant]
    delta = np.mean([b.per_query[q].metrics["ndcg@10"] - a.per_query[q].metrics["ndcg@10"]
                     for q in gold])  # fmt: skip
    assert got["classical"]["estimate"] == pytest.approx(float(delta), abs=1e-9)
    assert (got["n_labeled"], got["n_predicted"]) == (LABELLED, 46 - LABELLED)
    text = run("history", "diff", "1", "2", "-m", "ndcg@10", *h, env=env).stdout
    assert got["high"] < 0  # the interval excludes 0
    line = next(x for x in text.splitlines() if "over every query" in x)
    assert "(significant; rests on 20 labelled queries, 26 predicted)" in line
    same = json.loads(run("history", "diff", "1", "1", "-m", "ndcg@10", "--json", *h,
                          env=env).stdout)["metrics"][0]["ppi"]  # fmt: skip
    assert same["low"] <= 0 <= same["high"]  # a run against itself: never significant
    shown = run("history", "diff", "1", "1", "-m", "ndcg@10", *h, env=env).stdout
    assert "n.s.: the interval holds 0; rests on 20 labelled" in shown


def test_the_filter_breakdown_of_an_estimate_counts_only_labelled_queries(
    sample_home: Path, tmp_path: Path
) -> None:
    """The unlabelled rows an estimate keeps have no metric: grouped by their filters, they had
    counted as 0 and pulled every group's mean down (the ``all`` row said 46 queries beside the
    20 labelled ones' means)."""
    rows = [json.loads(x) for x in _partly_labelled(tmp_path).read_text().splitlines()]
    full = {
        r["query_id"]: r for r in map(json.loads, robotics_benchmark().read_text().splitlines())
    }
    for row in rows:
        if row["query_id"] in {"q41", "q43", "q45"}:  # one filtered row of each category
            row["relevant"] = full[row["query_id"]]["relevant"]
    bench = tmp_path / "mixed.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = home_env(sample_home)
    args = ("eval", str(bench), "-c", "robotics", "--estimate", "--no-throughput", "--no-record")
    done = run(*args, "--json", env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    labelled = {q for q, row in doc["per_query"].items() if row["relevant"]}
    assert len(labelled) == LABELLED + 3 and len(doc["per_query"]) == 46
    groups = doc["breakdown"]["filters"]["groups"]
    assert sorted(q for g in groups.values() for q in g["query_ids"]) == sorted(labelled)
    assert {label: g["queries"] for label, g in groups.items() if label != "(no filter)"} == {
        "category=sensors": 1, "category=navigation": 1, "category=operations": 1
    }  # fmt: skip
    for g in groups.values():  # each group's mean is its own rows' mean, recomputed here
        mean = np.mean([doc["per_query"][q]["metrics"]["ndcg@10"] for q in g["query_ids"]])
        assert g["metrics"]["ndcg@10"] == pytest.approx(mean, abs=1e-6)
    shown = run(*args, "--gate", "ndcg@10>=0.5", env=env, timeout=300)
    assert shown.returncode == 0, shown.stderr
    low = doc["metrics_ci"]["ndcg@10"]["low"]  # the gate's line shows the end it tested, rounded
    assert f"PASS ndcg@10>=0.5 (value {round(low, 4)}, the lower end" in shown.stdout
    all_row = next(line for line in shown.stdout.splitlines() if line.startswith("│ all "))
    assert all_row.split("│")[2].strip() == str(LABELLED + 3)
