"""``judge --plan N --pair A.json B.json``: a comparison's plan for any two configurations (here
dense against BM25 on one collection), made from two reports saved with ``eval --estimate``, and
taken back by ``compare --plan-file``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.estimate.pair_plan import ComparisonPlan
from ragsonde.samples import robotics_benchmark
from tests.support import Cli, robotics_hybrid

pytestmark = pytest.mark.slow
START, PLANNED = 12, 10


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxEmbedder) -> Path:
    return robotics_hybrid(tmp_path_factory.mktemp("pair_plan"), embedder)


def _partly(path: Path) -> tuple[Path, set[str]]:
    rows = [json.loads(line) for line in robotics_benchmark().read_text().splitlines() if line]
    for row in rows[START:]:
        del row["relevant"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, {r["query_id"] for r in rows[:START]}


@pytest.fixture(scope="module")
def saved(home: Path, tmp_path_factory: pytest.TempPathFactory, cli: Cli):
    tmp = tmp_path_factory.mktemp("pair_reports")
    bench, labelled = _partly(tmp / "partly.jsonl")
    reports = []
    for mode in ("dense", "sparse"):
        out = tmp / f"{mode}.json"
        done = cli("eval", str(bench), "-c", "robotics", "--home", str(home), "--mode", mode,
                   "--estimate", "--no-throughput", "--no-record", "--save", str(out))  # fmt: skip
        assert done.exit_code == 0, done.output
        reports.append(out)
    return bench, labelled, reports


def _top10(report: Path) -> dict[str, list[str]]:
    """Each query's top 10 ids, read from the saved JSON itself (not through ragsonde's model)."""
    doc = json.loads(report.read_text())
    return {q: [hit[0] for hit in row["retrieved"]][:10] for q, row in doc["per_query"].items()}


def test_a_plan_from_two_saved_reports(saved, home: Path, cli: Cli, tmp_path: Path) -> None:
    bench, labelled, (dense, sparse) = saved
    plan_file = tmp_path / "pair.plan.json"
    done = cli("judge", str(bench), "-c", "robotics", "--home", str(home), "--plan", str(PLANNED),
               "--pair", str(dense), str(sparse), "-o", str(plan_file))  # fmt: skip
    assert done.exit_code == 0, done.output
    plan = ComparisonPlan.model_validate_json(plan_file.read_text())
    a, b = _top10(dense), _top10(sparse)
    exact = {q for q in a if a[q] == b[q]}
    assert plan.exact == len(exact) and plan.labelled_now == len(labelled)
    assert plan.systems == [str(dense), str(sparse)]
    chosen = {p.query_id for p in plan.plan}
    assert len(chosen) == PLANNED and not chosen & (labelled | exact)

    both = cli("compare", str(dense), str(sparse), "--plan-file", str(plan_file), "--json")
    assert both.exit_code == 0, both.output
    metrics = json.loads(both.stdout)["metrics"]
    ndcg = next(m for m in metrics if m["metric"] == "ndcg@10")
    assert ndcg["ppi"]["method"].startswith("stratified")
    assert ndcg["ppi"]["n_labeled"] == len(labelled)


def test_bad_pairs_are_refused_before_any_work(saved, home: Path, cli: Cli, tmp_path: Path) -> None:
    bench, _, (dense, sparse) = saved
    before = dense.read_bytes()
    common = ["judge", str(bench), "-c", "robotics", "--home", str(home), "--plan", "4"]
    over = cli(*common, "--pair", str(dense), str(sparse), "-o", str(dense))
    assert over.exit_code == 2 and dense.read_bytes() == before  # the output is an input
    both = cli(*common, "--pair", str(dense), str(sparse), "--versus", "openai:x")
    assert both.exit_code == 2 and "--pair" in both.output
    fewer = json.loads(sparse.read_text())
    fewer["per_query"] = dict(list(fewer["per_query"].items())[:5])
    other = tmp_path / "fewer.json"
    other.write_text(json.dumps(fewer))
    differ = cli(*common, "--pair", str(dense), str(other), "-o", str(tmp_path / "p.json"))
    assert differ.exit_code == 2 and "different queries" in differ.output
    assert not (tmp_path / "p.json").exists()
    # a lone surrogate escaped in a saved report's text: refused where the report is read
    text = sparse.read_text().replace('"query": "', '"query": "\\udc80', 1)
    assert "\\udc80" in text
    broken = tmp_path / "surrogate.json"
    broken.write_text(text)
    bad = cli(*common, "--pair", str(dense), str(broken), "-o", str(tmp_path / "s.json"))
    assert bad.exit_code == 2 and "lone surrogate" in bad.output, bad.output
    assert not (tmp_path / "s.json").exists()
    assert cli("compare", str(dense), str(broken)).exit_code == 2
    # one report twice: no query differs; it said "plan 4: expected 1 to 0"
    twice = cli(*common, "--pair", str(dense), str(dense), "-o", str(tmp_path / "t.json"))
    assert twice.exit_code == 2 and "nothing to plan" in " ".join(twice.output.split())
    # the benchmark named is not the one the reports were saved from (here: every row labelled);
    # the plan was made from the reports' labels and the benchmark argument went unread
    full = ["judge", str(robotics_benchmark()), "-c", "robotics", "--home", str(home)]
    other_bench = cli(*full, "--plan", "4", "--pair", str(dense), str(sparse),
                      "-o", str(tmp_path / "f.json"))  # fmt: skip
    message = " ".join(other_bench.output.split())
    assert other_bench.exit_code == 2 and "was not saved from" in message, message
    assert f"{START} of 46 queries labelled there, 46 of 46 here" in message
    assert not (tmp_path / "f.json").exists()
