"""The pytest plugin in a user's own suite (pytest's ``pytester``, run in a real subprocess with
the plugin loaded by its entry point): a gate on an estimate passes only when the interval's
lower end clears it and says so when it does not; the report it returns carries the interval;
a gate on machine-made labels passes only through an estimate."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ragsonde.config import Settings
from ragsonde.estimate import estimating
from ragsonde.evaluate import EvalOptions, evaluate
from ragsonde.models.estimate import MetricEstimate
from ragsonde.workspace import Workspace
from tests.estimate.support import generated_after, partly_labelled
from tests.support import ROOT

pytestmark = pytest.mark.slow  # the model, and a pytest process


@pytest.fixture(scope="module")
def expected(
    sample_home: Path, embedder: Any, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, MetricEstimate]:
    """The partly labelled benchmark and its ndcg@10 estimate, evaluated here (in a fixture set
    up before ``pytester``, which drops the modules a test imports when it ends)."""
    bench = partly_labelled(tmp_path_factory.mktemp("plugin") / "partly.jsonl")
    options = EvalOptions(k=[10], throughput=False, estimate=True)
    with Workspace(Settings(home=sample_home, collection="robotics"), embedder=embedder) as ws:
        want = evaluate(bench, options, ws, record=False, extend=estimating(options))
    return bench, (want.metrics_ci or {})["ndcg@10"]


def test_a_users_gates_on_an_estimate_test_the_intervals_end(
    expected: tuple[Path, MetricEstimate],
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    sample_home: Path,
    tmp_path: Path,
) -> None:
    bench, e = expected
    between = round((e.low + e.estimate) / 2, 4)  # the estimate clears it, the lower end not
    assert e.low < between < e.estimate
    generated = generated_after(tmp_path / "generated.jsonl")
    pytester.makepyfile(
        test_user=f"""
        import pytest

        BENCH, GENERATED = {str(bench)!r}, {str(generated)!r}

        def test_clears(assert_retrieval):
            report = assert_retrieval(BENCH, ["ndcg@10>={e.low - 0.01:.4f}"],
                                      collection="robotics", estimate=True)
            got = report.metrics_ci["ndcg@10"]
            assert got.low == pytest.approx({e.low!r}, abs=1e-4)
            assert (got.n_labeled, got.n_predicted) == ({e.n_labeled}, {e.n_predicted})

        def test_between(assert_retrieval):
            assert_retrieval(BENCH, ["ndcg@10>={between}"], collection="robotics",
                             estimate=True)

        def test_machine_labels_raw(assert_retrieval):
            assert_retrieval(GENERATED, ["hit_rate@10>=0.05"], collection="robotics")

        def test_machine_labels_estimated(assert_retrieval):
            assert_retrieval(GENERATED, ["hit_rate@10>=0.0"], collection="robotics",
                             estimate=True)
        """
    )
    monkeypatch.setenv("RAGSONDE_HOME", str(sample_home))
    monkeypatch.setenv("RAGSONDE_RECORD", "0")
    monkeypatch.delenv("QDRANT_URL", raising=False)
    monkeypatch.setenv("PYTHONPATH", f"{ROOT / 'src'}{os.pathsep}{ROOT}")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=600)
    result.assert_outcomes(passed=2, failed=2)
    out = result.stdout.str()
    assert "test_user.py::test_between FAILED" in out or "FAILED test_user.py::test_between" in out
    result.stdout.fnmatch_lines(
        [
            f"*ndcg@10>={between:g}: got *, on the lower end of the 95 % interval "
            f"(cross-ppi++, {e.n_labeled} labelled queries)*",
            "*hit_rate@10>=0.05: got *, on refused: a machine made the labels of 26 of the 46 "
            "labelled queries (generator:offline:gist)*",
        ]
    )
    assert "FAILED test_user.py::test_machine_labels_raw" in out
