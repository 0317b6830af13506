"""``ragsonde eval``: a real process for exit codes and files, in process for the JSON."""

from __future__ import annotations

import json
import subprocess

import pytest
from typer.testing import CliRunner

import ragsonde.cli.eval
import ragsonde.cli.schema  # noqa: F401  (a second command keeps the app a group)
from ragsonde.cli.app import app
from ragsonde.evaluate.breakdown import NO_FILTER
from ragsonde.evaluate.html import render_html_report
from ragsonde.evaluate.report import EvalReport
from ragsonde.samples import robotics_benchmark
from tests.support import run


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


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return run(*args, timeout=300)


@pytest.mark.slow
def test_cli_gates_exit_codes_and_outputs(sample_home, tmp_path):
    common = [
        "eval",
        str(robotics_benchmark()),
        "-c",
        "robotics",
        "--home",
        str(sample_home),
        "--no-throughput",
    ]
    failing = _cli(*common, "--gate", "ndcg@10>=0.999", "--gate", "hit_rate@5>=0.5")
    assert failing.returncode == 1, failing.stderr
    assert "FAIL ndcg@10>=0.999" in failing.stdout and "PASS hit_rate@5>=0.5" in failing.stdout
    assert "gates failed" in failing.stderr
    out = _cli(
        *common,
        "--gate", "hit_rate@10>=0.5",
        "--json",
        "--save", str(tmp_path / "r.json"),
        "--run-out", str(tmp_path / "run.trec"),
        "--report", str(tmp_path / "r.html"),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    printed = json.loads(out.stdout)
    saved = json.loads((tmp_path / "r.json").read_text())
    assert printed["metrics"] == saved["metrics"] and printed["gates"][0]["passed"] is True
    assert set(printed) >= {
        "dataset",
        "collection",
        "embedder",
        "n_queries",
        "metrics",
        "per_query",
        "latency",
        "integrity",
        "gates",
    }
    assert len((tmp_path / "run.trec").read_text().splitlines()) >= 6
    assert "<svg" in (tmp_path / "r.html").read_text()
    bad = _cli(*common, "--gate", "ndgc@10>=1")
    assert bad.returncode == 2 and "Unknown metric" in bad.stderr


@pytest.mark.slow
def test_cli_by_section_json(sample_home):
    common = ["eval", str(robotics_benchmark()), "-c", "robotics", "--home", str(sample_home)]
    out = CliRunner().invoke(
        app, [*common, "--no-throughput", "--by", "section", "--k", "1,5,10", "--json"]
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    by = doc["breakdown"]["by"]
    assert by["field"] == "section" and "most relevant item" in by["rule"]
    # by document, a page's first chunk is its top heading
    assert by["groups"]["Lidar"]["query_ids"] == ["q01", "q02", "q41"]
    assert by["groups"]["IMU"]["query_ids"] == ["q05", "q06", "q42"]
    _assert_means_of_members(doc, by["groups"])
    assert set(doc["breakdown"]["filters"]["groups"]) >= {"category=sensors", NO_FILTER}
    bad = CliRunner().invoke(app, [*common, "--by", "sectoin"])
    assert bad.exit_code == 2 and "no relevant chunk" in bad.stderr


@pytest.mark.slow
def test_cli_judged_only_scores_over_labelled_hits_and_says_so(sample_home, tmp_path):
    common = ["eval", str(robotics_benchmark()), "-c", "robotics", "--home", str(sample_home)]
    common += ["--no-throughput", "--k", "1,10"]
    plain = CliRunner().invoke(app, [*common, "--json"])
    assert plain.exit_code == 0, plain.output
    full = json.loads(plain.stdout)
    assert full["judged_only"] is False
    saved = tmp_path / "judged.json"
    out = CliRunner().invoke(app, [*common, "--judged-only", "--save", str(saved)])
    assert out.exit_code == 0, out.output
    assert "scored over judged hits only" in out.stdout
    assert "scored over judged hits only" not in CliRunner().invoke(app, common).stdout
    condensed = json.loads(saved.read_text())
    assert condensed["judged_only"] is True
    # Coverage is never condensed; the ranking metrics are. Every label of the sample is
    # relevant, so with unjudged hits dropped a query's first hit is relevant whenever one came
    # back at all: MRR equals the uncondensed hit rate, and beats the uncondensed MRR.
    assert condensed["metrics"]["judged@10"] == full["metrics"]["judged@10"] < 0.5
    assert condensed["metrics"]["mrr"] == pytest.approx(full["metrics"]["hit_rate@10"])
    assert condensed["metrics"]["mrr"] > full["metrics"]["mrr"]
    assert "Scored over judged hits only" in render_html_report(EvalReport(**condensed))
