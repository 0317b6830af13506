"""``ragsonde eval --versus`` in process: the JSON report (valid against the published schema),
``--save``, the tables, the no-regression gate's exit codes, and misuse. The collections are the
ones the session fixture ``versus`` ingested (tests/conftest.py): these runs cost only queries."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from scipy import stats

from ragsonde.config import DEFAULT_EMBEDDER
from ragsonde.samples import robotics_docs
from ragsonde.testing import FakeEmbeddingAPI
from tests.support import A_COLL, B_COLL, HASHED, SMALL, Cli, per_query


@pytest.fixture
def env(versus_api: FakeEmbeddingAPI) -> dict[str, str]:
    return {"OPENAI_BASE_URL": f"{versus_api.url}/v1"}


def _eval(home: Path, bench: Path, *extra: str) -> list[str]:
    return [
        "eval",
        str(bench),
        "-c",
        "robotics",
        "--home",
        str(home),
        "--corpus",
        str(robotics_docs()),
        "--no-throughput",
        "--embedder",
        DEFAULT_EMBEDDER,
        "--versus",
        HASHED,
        *extra,
    ]


@pytest.mark.slow
@pytest.mark.usefixtures("versus")
def test_cli_json_save_and_the_gate_failing(
    cli: Cli,
    env: dict[str, str],
    versus_home: Path,
    versus_bench: Path,
    tmp_path: Path,
    validate_report: Callable[[dict], None],
) -> None:
    saved = tmp_path / "versus.json"
    out = cli(
        *_eval(versus_home, versus_bench, "--json", "--gate-no-regression", "--save", str(saved)),
        env=env,
    )
    assert out.exit_code == 1, out.output
    doc = json.loads(out.stdout)
    validate_report(doc)  # the published schema covers the versus kind too
    assert set(doc) == {"schema_version", "kind", "a", "b", "comparison"}
    assert doc["a"]["collection"] == A_COLL and doc["b"]["collection"] == B_COLL
    assert doc["a"]["embedder"] == DEFAULT_EMBEDDER and doc["b"]["embedder"] == HASHED
    assert doc["comparison"]["gate"] == {
        "metrics": ["ndcg@10"],
        "regressions": ["ndcg@10"],
        "passed": False,
    }
    ndcg = next(m for m in doc["comparison"]["metrics"] if m["metric"] == "ndcg@10")
    a, b = per_query(doc["a"], "ndcg@10"), per_query(doc["b"], "ndcg@10")
    assert ndcg["p_ttest"] == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-12)
    assert ndcg["verdict"] == "worse"
    assert json.loads(saved.read_text()) == doc
    assert "significant regression" in out.stderr and "ndcg@10" in out.stderr


@pytest.mark.slow
@pytest.mark.usefixtures("versus")
def test_cli_tables_and_a_passing_gate(
    cli: Cli, env: dict[str, str], versus_home: Path, versus_bench: Path
) -> None:
    # Both embedders find every relevant page in the top 100 of 24 pages: no regression there.
    out = cli(
        *_eval(
            versus_home, versus_bench, "--k", "10,100", "-m", "recall@100", "--gate-no-regression"
        ),
        env=env,
    )
    assert out.exit_code == 0, out.output
    for text in (A_COLL, B_COLL, f"B vs A on {SMALL} queries", "recall@100", "PASS"):
        assert text in out.stdout, text
    assert "W/T/L" in out.stdout


@pytest.mark.slow
def test_cli_misuse_is_a_validation_error(
    cli: Cli, env: dict[str, str], versus_home: Path, versus_bench: Path, tmp_path: Path
) -> None:
    alone = cli(
        "eval", str(versus_bench), "--home", str(versus_home), "--gate-no-regression", env=env
    )
    assert alone.exit_code == 2 and "--versus" in alone.stderr
    # one run's TREC file (--report writes the comparison's page: tests/cli/test_versus_estimate)
    run_out = cli(
        *_eval(versus_home, versus_bench, "--run-out", str(tmp_path / "r.trec"), "--json"), env=env
    )
    assert run_out.exit_code == 2, run_out.output
    assert json.loads(run_out.stdout)["error"]["code"] == "VALIDATION_ERROR"
