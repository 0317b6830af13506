"""Metrics per filter and per ``--by`` group: by hand, then on the sample docs with the real model
and the real Edge store, through the library, the HTML report, the Rich output and the CLI."""

from __future__ import annotations

import json

import pytest

from ragsonde.cli._common import console
from ragsonde.cli.render import render_report
from ragsonde.config import Settings
from ragsonde.errors import QueryValidationError
from ragsonde.evaluate import EvalOptions, parse_gate
from ragsonde.evaluate.breakdown import (
    NO_FILTER,
    NOT_IN_COLLECTION,
    filter_label,
    headline_metrics,
    parse_by,
    summarize_groups,
)
from ragsonde.evaluate.html import render_html_report
from ragsonde.evaluate.integrity import IntegrityReport
from ragsonde.evaluate.report import GateResult, QueryRow
from ragsonde.retriever import Retriever
from ragsonde.samples import robotics_benchmark
from tests.support import evaluate_in

SENSORS = "https://docs.rover.example/sensors"


def test_filter_labels():
    assert filter_label(None) == filter_label({}) == NO_FILTER
    assert filter_label({"section": ["a", "b"], "category": "sensors"}) == (
        "category=sensors, section=a|b"
    )
    assert filter_label({"chunk_index": 0, "draft": False}) == "chunk_index=0, draft=false"


def test_parse_by():
    assert parse_by("category") == ("category", None)
    assert parse_by(" url:2 ") == ("url", 2)
    for bad in ("", ":1", "url:", "url:0", "url:x"):
        # the message names the field and the rule, not the CLI flag
        with pytest.raises(QueryValidationError, match="give a payload field") as info:
            parse_by(bad)
        assert info.value.field == "by"


def test_summaries_by_hand():
    per_query = {
        "a": {"metrics": {"ndcg@10": 1.0, "mrr": 1.0}, "retrieved": [["x", 0.9]]},
        "b": {
            "metrics": {"ndcg@10": 0.5, "mrr": 0.25},
            "retrieved": [["y", 0.8]],
            "filter_violations": 2,
        },
        "c": {"metrics": {"ndcg@10": 0.0, "mrr": 0.0}, "retrieved": [], "filter_violations": 0},
    }
    rows = {
        q: QueryRow.model_validate({"query": q, "relevant": {}, "total_ms": 1.0, "timings": {}} | r)
        for q, r in per_query.items()
    }
    out = summarize_groups({"a": "g1", "b": "g1", "c": "(no value)"}, rows)
    assert list(out) == ["g1", "(no value)"]  # named groups first, then the special ones
    assert out["g1"].model_dump() == {
        "queries": 2,
        "metrics": {"ndcg@10": 0.75, "mrr": 0.625},
        "empty_results": 0,
        "filter_violations": 2,
        "query_ids": ["a", "b"],
    }
    assert out["(no value)"].empty_results == 1 and out["(no value)"].metrics["mrr"] == 0


def test_headline_metrics():
    metrics = dict.fromkeys(["ndcg@5", "ndcg@10", "recall@10", "hit_rate@5", "hit_rate@10", "mrr"])
    gates = [
        GateResult(gate="hit_rate@5>=0.8", value=1.0, passed=True),
        GateResult(gate="latency.total_ms.p95<=50", value=9.0, passed=True),
    ]
    assert headline_metrics(metrics, gates) == ["hit_rate@5", "ndcg@10", "recall@10", "mrr"]
    only5 = dict.fromkeys(["ndcg@1", "ndcg@5", "recall@5", "hit_rate@5"])
    assert headline_metrics(only5) == ["ndcg@5", "recall@5", "hit_rate@5"]


def _assert_means_of_members(report: dict, groups: dict) -> None:
    per_query = report["per_query"]
    assert sum(g["queries"] for g in groups.values()) == report["n_queries"]
    for g in groups.values():
        assert g["queries"] == len(g["query_ids"])
        for name, value in g["metrics"].items():
            members = [per_query[q]["metrics"][name] for q in g["query_ids"]]
            assert value == pytest.approx(sum(members) / len(members), abs=1e-6)
    for name, overall in report["metrics"].items():
        weighted = sum(g["metrics"][name] * g["queries"] for g in groups.values())
        assert weighted / report["n_queries"] == pytest.approx(overall, abs=1e-5)


@pytest.fixture(scope="module")
def by_category(sample_home, embedder):
    return evaluate_in(
        robotics_benchmark(),
        settings=Settings(home=sample_home, collection="robotics"),
        embedder=embedder,
        options=EvalOptions(by="category", throughput=False, gates=[parse_gate("hit_rate@5>=0.8")]),
    )


@pytest.mark.slow
def test_sample_benchmark_by_filter_and_by_category(by_category):
    doc = by_category.model_dump(mode="json")
    assert by_category.passed  # the demo's gate holds with the filtered questions in
    filters = doc["breakdown"]["filters"]["groups"]
    assert list(filters) == [
        "category=navigation",
        "category=operations",
        "category=sensors",
        NO_FILTER,
    ]
    assert filters["category=sensors"]["query_ids"] == ["q41", "q42"]
    assert filters[NO_FILTER]["queries"] == 40
    assert all(g["filter_violations"] == 0 for g in filters.values())
    assert doc["per_query"]["q41"]["filters"] == {"category": "sensors"}
    assert doc["per_query"]["q41"]["filter_violations"] == 0
    assert "filters" not in doc["per_query"]["q01"]
    _assert_means_of_members(doc, filters)

    by = doc["breakdown"]["by"]
    assert (by["field"], by["depth"]) == ("category", None)
    groups = by["groups"]
    assert list(groups) == ["navigation", "operations", "sensors"]
    # q04's most relevant page is the first listed (ultrasonic), q25's is costmaps
    assert "q04" in groups["sensors"]["query_ids"] and "q25" in groups["navigation"]["query_ids"]
    assert {"q41", "q42"} <= set(groups["sensors"]["query_ids"])
    _assert_means_of_members(doc, groups)


@pytest.mark.slow
def test_breakdown_in_the_html_report_and_the_terminal(by_category):
    html = render_html_report(by_category)
    assert 'id="breakdown-filters"' in html and 'id="breakdown-by"' in html
    assert '<td class="l">category=sensors</td>' in html
    with console.capture() as captured:
        render_report(by_category)
    out = captured.get()
    assert "metrics by filter" in out and "metrics by category" in out
    assert "violations" in out and "(no filter)" in out


@pytest.mark.slow
def test_a_wrong_filter_shows_lower_metrics(sample_home, embedder, tmp_path):
    questions = {
        "lidar": "how do I calibrate the laser scanner so it points straight ahead?",
        "imu": "my heading drifts several degrees per minute after turning the robot on",
        "gps": "how do I get centimeter-level positioning outside using correction data?",
        "bumpers": "how much force does it take to trigger the contact switches on the shell?",
    }
    filters = {
        "right": {"category": "sensors"},
        "wrong": {"category": "navigation"},
        "none": {"category": "<b>nowhere</b>"},
    }
    bench = tmp_path / "filtered.jsonl"
    bench.write_text(
        "".join(
            json.dumps({"query_id": f"{doc}-{name}", "query": q, "relevant": [doc], "filters": f})
            + "\n"
            for doc, q in questions.items()
            for name, f in filters.items()
        )
    )
    report = evaluate_in(
        bench,
        settings=Settings(home=sample_home, collection="robotics"),
        embedder=embedder,
        options=EvalOptions(by="url:1", throughput=False, ks=(1, 5, 10)),
    )
    groups = report.model_dump(mode="json")["breakdown"]["filters"]["groups"]
    right = groups["category=sensors"]["metrics"]
    wrong = groups["category=navigation"]["metrics"]
    assert right["hit_rate@5"] == 1.0 and right["ndcg@10"] > 0.8
    assert wrong["hit_rate@5"] == wrong["ndcg@10"] == 0.0  # the filter excludes the answer
    assert groups["category=navigation"]["empty_results"] == 0  # ... yet results came back
    nowhere = groups["category=<b>nowhere</b>"]
    assert nowhere["empty_results"] == 4 and nowhere["metrics"]["mrr"] == 0.0
    assert all(g["filter_violations"] == 0 for g in groups.values())
    assert report.integrity.counts["filter_violated"] == 0
    assert report.integrity.checked_results > 0
    # --by url:1: every question's page is under /sensors, whatever filter it ran with
    by = report.model_dump(mode="json")["breakdown"]["by"]["groups"]
    assert list(by) == [SENSORS] and by[SENSORS]["queries"] == 12
    html = render_html_report(report)
    assert "category=&lt;b&gt;nowhere&lt;/b&gt;" in html and "<b>nowhere</b>" not in html


@pytest.mark.slow
def test_integrity_counts_filter_violations_per_response(sample_home, embedder):
    settings = Settings(home=sample_home, collection="robotics")
    with Retriever(settings, embedder=embedder) as r:
        resp = r.retrieve({"query": "how do I update the firmware?", "top_k": 10})
    outside = [x for x in resp.results if x.metadata.get("category") != "sensors"]
    assert outside, "the unfiltered search should reach other categories"
    integrity = IntegrityReport()
    found = integrity.check(resp, {"category": "sensors"})
    assert found == {"filter_violated": len(outside)}
    assert integrity.counts["filter_violated"] == len(outside)
    assert integrity.check(resp, None) == {}


@pytest.mark.slow
def test_by_a_field_no_chunk_has_fails_before_any_query(sample_home, embedder):
    with pytest.raises(QueryValidationError, match="Fields they have: category") as e:
        evaluate_in(
            robotics_benchmark(),
            settings=Settings(home=sample_home, collection="robotics"),
            embedder=embedder,
            options=EvalOptions(by="sectoin", throughput=False),
        )
    assert "section" in str(e.value) and e.value.field == "by"


@pytest.mark.slow
def test_missing_relevant_pages_get_their_own_group(sample_home, embedder, tmp_path):
    bench = tmp_path / "b.jsonl"
    bench.write_text(
        '{"query_id": "1", "query": "lidar calibration", "relevant": ["lidar"]}\n'
        '{"query_id": "2", "query": "warp drive", "relevant": {"warp-drive": 2, "lidar": 1}}\n'
    )
    report = evaluate_in(
        bench,
        settings=Settings(home=sample_home, collection="robotics"),
        embedder=embedder,
        options=EvalOptions(by="section:1", throughput=False, ks=(5,)),
    )
    groups = report.model_dump(mode="json")["breakdown"]["by"]["groups"]
    assert groups["Lidar"]["query_ids"] == ["1"]
    assert groups[NOT_IN_COLLECTION]["query_ids"] == ["2"]  # its most relevant page is missing
    assert report.model_dump(mode="json")["breakdown"]["filters"] is None
