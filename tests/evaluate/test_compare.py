"""``compare_reports`` and ``ragsonde compare`` on reports built by hand from known arrays.

Every expected statistic is computed here, independently, with scipy on the same arrays.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

import ragsonde.cli.compare  # registers the command on the app
import ragsonde.cli.eval  # a second command keeps the app a group (`app compare …`)
from ragsonde.cli.app import app
from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.compare import compare_reports
from ragsonde.evaluate.report import EvalReport

N = 50
IDS = [f"q{i:02d}" for i in range(N)]


def report_json(
    metrics: dict[str, np.ndarray], ids: list[str] = IDS, name: str = "A"
) -> dict[str, Any]:
    """A saved report as ``eval --save`` writes it (schema 1.0, before ``schema_version``
    existed): means and per-query metrics, the other parts empty."""
    per_query: dict[str, dict[str, Any]] = {}
    for i, qid in enumerate(ids):
        per_query[qid] = {
            "query": f"question number {qid}",
            "metrics": {m: float(v[i]) for m, v in metrics.items()},
            "relevant": {},
            "retrieved": [],
            "total_ms": 1.0,
            "timings": {},
        }
    return {
        "dataset": "hand-made",
        "collection": f"coll-{name}",
        "embedder": f"emb-{name}",
        "relevance_by": "doc",
        "ks": [10],
        "search": {},
        "metrics": {m: float(np.mean(v)) for m, v in metrics.items()},
        "latency": {},
        "integrity": {},
        "benchmark": {"name": "hand-made", "queries": len(ids)},
        "created_at": "2026-11-23T00:00:00+00:00",
        "per_query": per_query,
    }


def make_report(
    metrics: dict[str, np.ndarray], ids: list[str] = IDS, name: str = "A"
) -> EvalReport:
    return EvalReport.model_validate(report_json(metrics, ids, name))


@pytest.fixture
def arrays() -> tuple[np.ndarray, np.ndarray]:
    """Per-query ndcg@10 of A and B (B slightly better, noisy), rounded like saved reports."""
    rng = np.random.default_rng(42)
    a = np.round(rng.uniform(0.2, 0.9, N), 6)
    b = np.round(np.clip(a + rng.normal(0.03, 0.1, N), 0, 1), 6)
    b[:5] = a[:5]  # five exact ties
    return a, b


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def test_p_values_and_ci_match_scipy(arrays: tuple[np.ndarray, np.ndarray]) -> None:
    a, b = arrays
    c = compare_reports(make_report({"ndcg@10": a}), make_report({"ndcg@10": b}, name="B"))
    m = c.metric("ndcg@10")
    ref_t = stats.ttest_rel(b, a)
    assert m.p_ttest == pytest.approx(ref_t.pvalue, rel=1e-12)
    assert m.t_statistic == pytest.approx(ref_t.statistic, rel=1e-12)
    ref_perm = stats.permutation_test(
        (b, a),
        _mean_diff,
        permutation_type="samples",
        vectorized=True,
        n_resamples=10000,
        random_state=np.random.default_rng(0),
    )
    assert m.p_permutation == pytest.approx(ref_perm.pvalue, rel=1e-12)
    # The same test in its sign-flip form on the differences agrees up to resampling noise.
    flip = stats.permutation_test(
        (b - a,), np.mean, permutation_type="samples", n_resamples=10000, random_state=1
    )
    assert m.p_permutation == pytest.approx(flip.pvalue, abs=0.02)
    ref_ci = stats.bootstrap(
        (b, a),
        _mean_diff,
        paired=True,
        vectorized=True,
        n_resamples=10000,
        random_state=np.random.default_rng(0),
    ).confidence_interval
    assert (m.ci_low, m.ci_high) == pytest.approx((ref_ci.low, ref_ci.high), rel=1e-12)
    assert m.ci_low < m.delta < m.ci_high


def test_means_deltas_and_wins(arrays: tuple[np.ndarray, np.ndarray]) -> None:
    a, b = arrays
    c = compare_reports(make_report({"ndcg@10": a}), make_report({"ndcg@10": b}, name="B"))
    m = c.metric("ndcg@10")
    assert m.mean_a == pytest.approx(a.mean())
    assert m.mean_b == pytest.approx(b.mean())
    assert m.delta == pytest.approx(b.mean() - a.mean())
    assert m.relative_delta == pytest.approx((b.mean() - a.mean()) / a.mean())
    assert (m.wins, m.ties, m.losses) == (int((b > a).sum()), 5, int((b < a).sum()))
    assert m.wins + m.ties + m.losses == N
    assert c.n_queries == N
    assert c.a.collection == "coll-A" and c.b.embedder == "emb-B"


def test_most_changed_queries(arrays: tuple[np.ndarray, np.ndarray]) -> None:
    a, b = arrays
    c = compare_reports(make_report({"ndcg@10": a}), make_report({"ndcg@10": b}, name="B"))
    top = np.argsort(-np.abs(b - a), kind="stable")[:10]
    assert [q.query_id for q in c.changed] == [IDS[i] for i in top]
    first = c.changed[0]
    assert first.query == f"question number {first.query_id}"
    assert first.delta == pytest.approx(first.b - first.a)
    assert abs(first.delta) == pytest.approx(np.abs(b - a).max())


def test_mismatched_queries_name_the_ids() -> None:
    v = np.full(N, 0.5)
    other = [*IDS[:-2], "extra1", "extra2"]
    with pytest.raises(QueryValidationError) as info:
        compare_reports(make_report({"ndcg@10": v}), make_report({"ndcg@10": v}, other))
    msg = info.value.message
    assert "2 only in A (q48, q49)" in msg
    assert "2 only in B (extra1, extra2)" in msg
    assert f"{N - 2} in both" in msg
    assert info.value.field == "per_query"


def test_unknown_metric_lists_available() -> None:
    v = np.full(N, 0.5)
    a = make_report({"ndcg@10": v, "recall@10": v})
    b = make_report({"ndcg@10": v, "mrr": v})
    with pytest.raises(QueryValidationError, match=r"'recall@10'.*available in both.*ndcg@10"):
        compare_reports(a, b, ["recall@10"])
    assert compare_reports(a, b).names == ["ndcg@10"]


def test_identical_reports_are_no_difference(arrays: tuple[np.ndarray, np.ndarray]) -> None:
    a, _ = arrays
    c = compare_reports(make_report({"ndcg@10": a}), make_report({"ndcg@10": a.copy()}))
    m = c.metric("ndcg@10")
    assert (m.p_ttest, m.p_permutation) == (1.0, 1.0)
    assert (m.ci_low, m.ci_high, m.delta) == (0.0, 0.0, 0.0)
    assert (m.wins, m.ties, m.losses) == (0, N, 0)
    assert not m.significant and m.verdict == "no significant difference"
    assert c.changed == []
    json.dumps(c.model_dump(mode="json"), allow_nan=False)


def test_constant_shift_has_no_nan(arrays: tuple[np.ndarray, np.ndarray]) -> None:
    a, _ = arrays
    a = np.round(a * 0.5, 6)
    b = np.round(a + 0.1, 6)  # same shift on every query, up to float noise
    m = compare_reports(make_report({"ndcg@10": a}), make_report({"ndcg@10": b})).metric("ndcg@10")
    assert m.t_statistic is None and m.p_ttest == 0.0
    assert m.p_permutation < 0.001
    assert m.ci_low == pytest.approx(0.1) and m.ci_high == pytest.approx(0.1)
    assert m.verdict == "better"


# --- the CLI ---------------------------------------------------------------------------------


def _write(tmp_path: Path, a: np.ndarray, b: np.ndarray) -> tuple[str, str]:
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(report_json({"ndcg@10": a, "recall@10": a})), encoding="utf-8")
    pb.write_text(json.dumps(report_json({"ndcg@10": b, "recall@10": a}, name="B")), "utf-8")
    return str(pa), str(pb)


def _shifted(arrays: tuple[np.ndarray, np.ndarray], shift: float) -> tuple[np.ndarray, ...]:
    a, _ = arrays
    noise = np.random.default_rng(7).normal(0, 0.05, N)
    return a, np.round(a + shift + noise, 6)


def test_cli_gate_fails_on_a_clearly_worse_b(
    tmp_path: Path, arrays: tuple[np.ndarray, np.ndarray]
) -> None:
    pa, pb = _write(tmp_path, *_shifted(arrays, -0.15))
    out = CliRunner().invoke(app, ["compare", pa, pb, "--gate-no-regression"])
    assert out.exit_code == 1, out.output
    assert "worse" in out.stdout and "significant regression" in out.stderr
    assert "queries that changed most" in out.stdout


def test_cli_gate_passes_on_a_better_b(
    tmp_path: Path, arrays: tuple[np.ndarray, np.ndarray]
) -> None:
    pa, pb = _write(tmp_path, *_shifted(arrays, 0.15))
    out = CliRunner().invoke(app, ["compare", pa, pb, "--gate-no-regression", "-m", "ndcg@10"])
    assert out.exit_code == 0, out.output
    assert "better" in out.stdout and "PASS" in out.stdout


def test_cli_gate_watches_only_named_metrics(
    tmp_path: Path, arrays: tuple[np.ndarray, np.ndarray]
) -> None:
    pa, pb = _write(tmp_path, *_shifted(arrays, -0.15))
    out = CliRunner().invoke(app, ["compare", pa, pb, "--gate-no-regression", "-m", "recall@10"])
    assert out.exit_code == 0, out.output


def test_cli_json_parses(tmp_path: Path, arrays: tuple[np.ndarray, np.ndarray]) -> None:
    pa, pb = _write(tmp_path, *arrays)
    out = CliRunner().invoke(app, ["compare", pa, pb, "--json", "--gate-no-regression"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert [m["metric"] for m in doc["metrics"]] == ["ndcg@10", "recall@10"]
    ndcg = doc["metrics"][0]
    a, b = arrays
    assert ndcg["p_ttest"] == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-12)
    assert doc["gate"] == {"metrics": ["ndcg@10"], "regressions": [], "passed": True}
    assert len(doc["most_changed"]["queries"]) == 10


def test_cli_mismatch_is_a_clean_validation_error(tmp_path: Path) -> None:
    v = np.full(N, 0.5)
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(report_json({"ndcg@10": v})), encoding="utf-8")
    pb.write_text(json.dumps(report_json({"ndcg@10": v}, IDS[:40])), encoding="utf-8")
    out = CliRunner().invoke(app, ["compare", str(pa), str(pb), "--json"])
    assert out.exit_code == 2, out.output
    err = json.loads(out.stdout)["error"]
    assert err["code"] == "VALIDATION_ERROR" and "10 only in A" in err["message"]
    missing = CliRunner().invoke(app, ["compare", str(pa), str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "cannot read report" in missing.stderr


def test_command_is_registered_with_help() -> None:
    assert ragsonde.cli.compare.compare_command.__doc__
    out = CliRunner().invoke(app, ["compare", "--help"])
    assert out.exit_code == 0 and "--gate-no-regression" in out.stdout


def test_saved_reports_go_through_the_model_and_their_version_is_checked(
    tmp_path: Path, arrays: tuple[np.ndarray, np.ndarray]
) -> None:
    a, b = arrays
    pa, pb = _write(tmp_path, a, b)  # no schema_version: read as 1.0
    assert CliRunner().invoke(app, ["compare", pa, pb]).exit_code == 0
    newer_minor = report_json({"ndcg@10": b, "recall@10": a}) | {
        "schema_version": "1.7",
        "a_field_from_the_future": {"x": 1},
    }
    Path(pb).write_text(json.dumps(newer_minor), encoding="utf-8")
    assert CliRunner().invoke(app, ["compare", pa, pb]).exit_code == 0
    Path(pb).write_text(json.dumps(newer_minor | {"schema_version": "2.0"}), encoding="utf-8")
    out = CliRunner().invoke(app, ["compare", pa, pb, "--json"])
    assert out.exit_code == 2, out.output
    err = json.loads(out.stdout)["error"]
    assert err["code"] == "VALIDATION_ERROR"
    assert "schema version 2.0" in err["message"] and pb in err["message"]
    broken = report_json({"ndcg@10": a})
    broken["per_query"]["q00"]["metrics"] = "high"
    Path(pb).write_text(json.dumps(broken), encoding="utf-8")
    out = CliRunner().invoke(app, ["compare", pa, pb])
    assert out.exit_code == 2 and "per_query.q00.metrics" in out.stderr
