"""``history diff`` of runs that ranked to different depths: a traffic run's signals read the
top_k each query was served, so with only top_k changed every such figure moved (the gap to the
k-th score, NQC, the results returned, the prediction made of them) and the diff called the run
with the smaller k "worse". Those figures are now marked not comparable; a metric with its own
cutoff (``recall@10``) is still compared."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragsonde.history.diff import NOT_COMPARABLE
from ragsonde.samples import robotics_benchmark
from tests.support import Cli

pytestmark = pytest.mark.slow  # the real model embeds the queries


def _diff(cli: Cli, history: Path, a: int, b: int) -> dict:
    r = cli("history", "diff", str(a), str(b), "--history", str(history), "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_only_top_k_changed_is_not_a_regression(cli: Cli, sample_home: Path, tmp_path: Path):
    home = tmp_path / "home"
    shutil.copytree(sample_home, home, ignore=shutil.ignore_patterns("history.sqlite*"))
    history = tmp_path / "history.sqlite"
    where = ("-c", "robotics", "--home", str(home), "--history", str(history))
    for k in ("10", "3"):
        r = cli("traffic", str(robotics_benchmark()), *where, "--top-k", k)
        assert r.exit_code == 0, r.output
    diff = _diff(cli, history, 1, 2)
    assert [(c["field"], c["a"], c["b"]) for c in diff["changes"]] == [("search.top_k", 10, 3)]
    verdicts = {m["metric"]: m["verdict"] for m in diff["metrics"]}
    # the figures moved with k alone: the gap to the 3rd score is smaller than to the 10th
    gap = next(m for m in diff["metrics"] if m["metric"] == "gap")
    assert gap["delta"] < 0 and gap["p_permutation"] < 0.05
    assert {"gap", "nqc", "results", "predicted"} <= verdicts.keys()
    assert set(verdicts.values()) == {NOT_COMPARABLE}  # none "worse" (nor "better")
    assert not any(m["significant"] for m in diff["metrics"])
    assert "top_k differs (10 in run 1, 3 in run 2)" in diff["not_comparable"]
    text = cli("history", "diff", "1", "2", "--history", str(history)).stdout
    assert "not comparable: top_k differs" in text
    assert not any(line.rstrip().endswith(("worse", "better")) for line in text.splitlines())

    # evaluations rank to their deepest cutoff: recall@10 is compared, mrr (no cutoff) is not
    bench = str(robotics_benchmark())
    for ks in ("1,10,100", "1,10"):
        r = cli("eval", bench, *where, "--k", ks)
        assert r.exit_code == 0, r.output
    evals = _diff(cli, history, 3, 4)  # the default metrics have their cutoff: compared
    assert evals["not_comparable"] is None
    assert NOT_COMPARABLE not in {m["verdict"] for m in evals["metrics"]}
    r = cli("history", "diff", "3", "4", "--history", str(history), "--json", "-m", "mrr")
    mrr = json.loads(r.stdout)
    assert mrr["metrics"][0]["verdict"] == NOT_COMPARABLE
    assert "the deepest cutoff (--k) differs (100 in run 3, 10 in run 4)" in mrr["not_comparable"]
    assert _diff(cli, history, 1, 1)["not_comparable"] is None  # the same depth: none marked
