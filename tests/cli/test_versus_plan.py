"""``judge --plan N --versus`` on a partly labelled benchmark: a comparison's plan (queries whose
two top 10s agree never planned, the rest stratified), then ``eval --versus --plan-file`` and
``compare --plan-file`` estimate B − A by the plan's strata once its queries are judged (their
labels from the benchmark's own). The collections are the session fixture ``versus``'s."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ragsonde.config import DEFAULT_EMBEDDER
from ragsonde.estimate.pair_plan import ComparisonPlan
from ragsonde.estimate.plan import JudgingPlan
from ragsonde.evaluate import VersusReport
from ragsonde.samples import robotics_benchmark, robotics_docs
from ragsonde.testing import FakeEmbeddingAPI
from tests.support import HASHED, Cli

pytestmark = pytest.mark.slow
START, PLANNED = 14, 16


def _write(path: Path, labelled: set[str]) -> Path:
    rows = [json.loads(line) for line in robotics_benchmark().read_text().splitlines() if line]
    for row in rows:
        if row["query_id"] not in labelled:
            del row["relevant"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.usefixtures("versus")
def test_a_comparison_plan_is_written_and_weighs_the_difference(
    cli: Cli, versus: VersusReport, versus_api: FakeEmbeddingAPI, versus_home: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    env = {"OPENAI_BASE_URL": f"{versus_api.url}/v1"}
    ids = list(versus.a.per_query)
    start = set(ids[:START])
    bench = _write(tmp_path / "partly.jsonl", start)
    common = ["-c", "robotics", "--home", str(versus_home), "--embedder", DEFAULT_EMBEDDER,
              "--versus", HASHED]  # fmt: skip
    plan_file = tmp_path / "plan.json"
    done = cli("judge", str(bench), *common, "--plan", str(PLANNED), "-o", str(plan_file),
               env=env)  # fmt: skip
    assert done.exit_code == 0, done.output
    assert "judge these" in done.stdout and "identical top 10" in done.stdout
    plan = ComparisonPlan.model_validate_json(plan_file.read_text())
    # the exact queries, counted from the fixture's own rankings (labels play no part)
    top = {
        q: ([d for d, _ in versus.a.per_query[q].retrieved][:10],
            [d for d, _ in versus.b.per_query[q].retrieved][:10])
        for q in ids
    }  # fmt: skip
    exact = {q for q, (a, b) in top.items() if a == b}
    assert plan.exact == len(exact) and plan.labelled_now == START
    assert {q for q, h in plan.stratum_of.items() if h == -1} == exact
    chosen = {p.query_id for p in plan.plan}
    assert len(chosen) == PLANNED and not chosen & (start | exact)
    assert all(0 < plan.probabilities[q] <= 1 for q in chosen)

    judged = _write(tmp_path / "judged.jsonl", start | chosen)  # the plan's labels, from qrels
    save = tmp_path / "versus.json"
    args = ["eval", str(judged), *common, "--corpus", str(robotics_docs()), "--no-throughput",
            "--no-record", "--estimate", "--plan-file", str(plan_file)]  # fmt: skip
    out = cli(*args, "--json", "--save", str(save), "-m", "ndcg@10", "--predictor", "none",
              env=env)  # fmt: skip
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    m = next(x for x in doc["comparison"]["metrics"] if x["metric"] == "ndcg@10")
    ppi = m["ppi"]
    assert ppi["method"] == "stratified" and ppi["n_labeled"] == START + PLANNED
    # the stratified mean written out: each stratum's mean labelled difference times its size
    full = {
        q: versus.b.per_query[q].metrics["ndcg@10"] - versus.a.per_query[q].metrics["ndcg@10"]
        for q in ids
    }
    total = 0.0
    for h in {h for h in plan.stratum_of.values() if h != -1}:
        members = [q for q, s in plan.stratum_of.items() if s == h]
        got = [full[q] for q in members if q in start | chosen]
        total += len(members) * float(np.mean(got))
    assert ppi["estimate"] == pytest.approx(total / len(ids), abs=1e-9)
    assert ppi["low"] <= ppi["estimate"] <= ppi["high"]
    assert m["significant"] == (ppi["low"] > 0 or ppi["high"] < 0)
    for side in ("a", "b"):  # each side's estimate weighs the labels by the same strata
        assert doc[side]["metrics_ci"]["ndcg@10"]["method"] == "stratified"

    # compare on the two saved reports reads the same plan and gives the same difference
    saved = VersusReport.model_validate_json(save.read_text())
    (tmp_path / "a.json").write_text(saved.a.model_dump_json())
    (tmp_path / "b.json").write_text(saved.b.model_dump_json())
    pair = (str(tmp_path / "a.json"), str(tmp_path / "b.json"), "-m", "ndcg@10", "--plan-file",
            str(plan_file), "--json")  # fmt: skip
    again = cli("compare", *pair, "--predictor", "none")
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["metrics"][0]["ppi"] == ppi
    # with the runs' score signals (the default), fitted to the labelled differences
    scored = json.loads(cli("compare", *pair).stdout)["metrics"][0]["ppi"]
    assert scored["method"] == "stratified-ppi++" and scored["sources"] == ["scores"]
    assert scored["n_labeled"] == START + PLANNED and 0.0 <= scored["lam"] <= 1.0
    # one system's eval under a comparison's plan: the same strata weigh its labels
    one = cli("eval", str(judged), "-c", versus.a.collection, "--home", str(versus_home),
              "--no-throughput", "--no-record", "--estimate", "--plan-file", str(plan_file),
              "--json", env=env)  # fmt: skip
    assert one.exit_code == 0, one.output
    assert json.loads(one.stdout)["metrics_ci"]["ndcg@10"] == doc["a"]["metrics_ci"]["ndcg@10"]
    # a comparison refuses one system's plan
    single = tmp_path / "single.json"
    single.write_text(JudgingPlan(metric="ndcg@10", queries_total=46, labelled_now=START,
                                  width_now=None, strata=[], plan=[]).model_dump_json())  # fmt: skip
    wrong = cli("compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--plan-file",
                str(single))  # fmt: skip
    assert wrong.exit_code != 0 and "plans one system" in wrong.output
    # without --estimate the unlabelled rows would be dropped with the plan's weights: refused
    bare = cli("eval", str(judged), *common, "--no-throughput", "--no-record", "--plan-file",
               str(plan_file), env=env)  # fmt: skip
    assert bare.exit_code != 0 and "add --estimate" in bare.output
