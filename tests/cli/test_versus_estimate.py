"""``eval --versus … --estimate`` on a partly labelled benchmark: each metric's paired
difference by PPI++ over every query, the verdict on its interval, the classical interval beside
it; on a fully labelled one the paired tests as before, with the classical interval added. The
collections are the ones the session fixture ``versus`` ingested (tests/conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ragsonde.config import DEFAULT_EMBEDDER
from ragsonde.evaluate import EvalOptions, VersusReport
from ragsonde.samples import robotics_benchmark, robotics_docs
from ragsonde.testing import FakeEmbeddingAPI
from tests.support import HASHED, Cli

pytestmark = pytest.mark.slow
LABELLED = 20


@pytest.fixture
def env(versus_api: FakeEmbeddingAPI) -> dict[str, str]:
    return {"OPENAI_BASE_URL": f"{versus_api.url}/v1"}


def _partly(tmp_path: Path) -> Path:
    """The sample benchmark (46 queries) with ``relevant`` kept on its first LABELLED rows."""
    rows = [json.loads(line) for line in robotics_benchmark().read_text().splitlines() if line]
    for row in rows[LABELLED:]:
        del row["relevant"]
    path = tmp_path / "partly.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _t_interval(d: np.ndarray) -> tuple[float, float]:
    """scipy's paired t interval of the differences (``ttest_1samp(d).confidence_interval``,
    as ``ttest_rel`` gives it), cut to a difference's range [-1, 1]: the classical interval
    and the paired t-test agree on significance."""
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    return max(-1.0, float(ci.low)), min(1.0, float(ci.high))


def _diffs(doc: dict, metric: str, ids: list[str]) -> np.ndarray:
    a, b = doc["a"]["per_query"], doc["b"]["per_query"]
    return np.asarray([b[q]["metrics"][metric] - a[q]["metrics"][metric] for q in ids])


@pytest.mark.usefixtures("versus")
def test_a_partly_labelled_versus_rests_its_verdict_on_the_ppi_interval(
    cli: Cli,
    env: dict[str, str],
    versus_home: Path,
    tmp_path: Path,
    validate_report: Callable[[dict], None],
) -> None:
    page = tmp_path / "versus.html"
    args = ["eval", str(_partly(tmp_path)), "-c", "robotics", "--home", str(versus_home),
            "--corpus", str(robotics_docs()), "--no-throughput", "--no-record", "--embedder",
            DEFAULT_EMBEDDER, "--versus", HASHED, "--estimate", "--gate-no-regression"]  # fmt: skip
    out = cli(*args, "--json", "--report", str(page), env=env)
    doc = json.loads(out.stdout)
    validate_report(doc)
    assert doc["schema_version"] == "1.10"
    comparison = doc["comparison"]
    assert comparison["n_queries"] == LABELLED  # the paired tests: the labelled queries
    assert "PPI++" in comparison["significance"]
    labelled = sorted(q for q, row in doc["a"]["per_query"].items() if row["relevant"])
    assert len(labelled) == LABELLED and len(doc["a"]["per_query"]) == 46
    for m in comparison["metrics"]:
        ppi, classical = m["ppi"], m["classical"]
        d = _diffs(doc, m["metric"], labelled)
        if d.std() == 0:  # no spread on the labels: the exact bound, from them alone
            q = 0.025 ** (1 / LABELLED)  # a difference lives in [-1, 1]
            assert (ppi["low"], ppi["high"]) == pytest.approx(
                (-1 + (d[0] + 1) * q, 1 - (1 - d[0]) * q)
            )
            assert ppi["method"] == "classical" and "every labelled value" in ppi["note"]
            continue
        assert (ppi["n_labeled"], ppi["n_predicted"]) == (LABELLED, 46 - LABELLED)
        assert ppi["method"] == "cross-ppi++" and ppi["sources"] == ["scores"]
        assert classical["estimate"] == pytest.approx(d.mean(), abs=1e-6)
        if d.std() > 0:
            low, high = _t_interval(d)
            assert (classical["low"], classical["high"]) == pytest.approx((low, high), abs=1e-5)
        # significant only when the PPI++ interval excludes 0, whatever the tests say
        assert m["significant"] == (ppi["low"] > 0 or ppi["high"] < 0)
        expected = ("better" if ppi["estimate"] > 0 else "worse") if m["significant"] else (
            "no significant difference")  # fmt: skip
        assert m["verdict"] == expected
    ndcg = next(m for m in comparison["metrics"] if m["metric"] == "ndcg@10")
    assert comparison["gate"]["passed"] == (ndcg["verdict"] != "worse")
    assert out.exit_code == (0 if comparison["gate"]["passed"] else 1), out.output
    for side in ("a", "b"):  # each side's own estimates too
        assert doc[side]["metrics_ci"]["ndcg@10"]["n_labeled"] == LABELLED
    html = page.read_text()
    assert html.count('aria-label="ndcg@10 difference intervals"') == 1
    assert f"[{ndcg['ppi']['low']:+.4f}, {ndcg['ppi']['high']:+.4f}]" in html
    shown = cli(*args, env=env)
    assert "PPI++ interval of B - A over every query excludes 0" in shown.stdout
    rests = f"rest on cross-ppi++: {LABELLED} labelled, {46 - LABELLED} predicted by scores"
    assert rests in shown.stdout


def test_a_fully_labelled_comparison_keeps_its_tests_and_adds_the_classical_interval(
    versus: VersusReport,
) -> None:
    from ragsonde.estimate import estimate_versus

    before = {m.metric: (m.significant, m.verdict) for m in versus.comparison.metrics}
    estimate_versus(versus, EvalOptions())
    ids = sorted(versus.a.per_query)
    assert versus.comparison.n_queries == len(ids) == 46
    for m in versus.comparison.metrics:
        assert m.ppi is None and m.classical is not None
        assert (m.significant, m.verdict) == before[m.metric]  # the paired tests decide
        d = np.asarray(
            [versus.b.per_query[q].metrics[m.metric] - versus.a.per_query[q].metrics[m.metric]
             for q in ids]
        )  # fmt: skip
        assert (m.classical.method, m.classical.n_labeled) == ("classical", 46)
        assert m.classical.estimate == pytest.approx(m.delta, abs=1e-9)
        if d.std() > 0:
            low, high = _t_interval(d)
            assert (m.classical.low, m.classical.high) == pytest.approx((low, high), abs=1e-9)


@pytest.mark.usefixtures("versus")
def test_a_predictor_that_replays_one_collection_is_refused_before_any_run(
    cli: Cli, env: dict[str, str], versus_home: Path, tmp_path: Path
) -> None:
    out = cli("eval", str(_partly(tmp_path)), "-c", "robotics", "--home", str(versus_home),
              "--no-record", "--versus", HASHED, "--estimate", "--predictor", "traffic",
              env=env)  # fmt: skip
    assert out.exit_code == 2, out.output
    assert "predictor 'traffic'" in out.output


def test_against_a_pushed_copy_on_a_partly_labelled_benchmark_finds_no_difference(
    cli: Cli, sample_home: Path, tmp_path: Path, validate_report: Callable[[dict], None]
) -> None:
    from ragsonde.config import Settings
    from ragsonde.store import open_store
    from ragsonde.store.push import open_target, push

    url = f"path:{tmp_path / 'copy'}"
    source, target = open_store(Settings(home=sample_home, collection="robotics")), open_target(url)
    try:
        push(source, "robotics", target)
    finally:
        source.close()
        target.close()
    page = tmp_path / "against.html"
    out = cli("eval", str(_partly(tmp_path)), "-c", "robotics", "--home", str(sample_home),
              "--no-throughput", "--no-record", "--exact", "--estimate", "--against", url,
              "--json", "--report", str(page))  # fmt: skip
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    validate_report(doc)
    ndcg = next(m for m in doc["comparison"]["metrics"] if m["metric"] == "ndcg@10")
    # the same rankings on both sides: every difference is 0, and so is its interval
    assert ndcg["ppi"]["n_labeled"] == LABELLED and ndcg["ppi"]["n_predicted"] == 46 - LABELLED
    assert (ndcg["ppi"]["low"], ndcg["ppi"]["high"]) == pytest.approx((0.0, 0.0), abs=1e-9)
    assert ndcg["verdict"] == "no significant difference" and not ndcg["significant"]
    assert 'aria-label="ndcg@10 difference intervals"' in page.read_text()
