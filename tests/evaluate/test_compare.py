"""``compare_reports`` on reports built by hand from known arrays.

Every expected statistic is computed here, independently, with scipy on the same arrays.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.compare import compare_reports
from tests.evaluate.reports import IDS, N, known_arrays, make_report


@pytest.fixture
def arrays() -> tuple[np.ndarray, np.ndarray]:
    return known_arrays()


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


def test_the_same_queries_with_other_labels_are_refused_naming_them() -> None:
    """Same system, same query ids, every other query's label changed: compare read a
    significant regression (-0.33, p<0.001) and warned of nothing."""
    v = np.full(N, 0.5)
    a, b = make_report({"ndcg@10": v}), make_report({"ndcg@10": v})
    for report in (a, b):
        for row in report.per_query.values():
            row.relevant = {"lidar": 1}
    for i, row in enumerate(b.per_query.values()):
        if i % 2:
            row.relevant = {"someone-else": 1}
    with pytest.raises(QueryValidationError, match="other labels for 25 of their 50") as info:
        compare_reports(a, b)
    assert info.value.field == "per_query"
    reworded = make_report({"ndcg@10": v})
    for row in reworded.per_query.values():
        row.relevant = {"lidar": 1}
    next(iter(reworded.per_query.values())).query = "another question"
    with pytest.raises(QueryValidationError, match="other questions or other labels for 1 "):
        compare_reports(a, reworded)
    assert compare_reports(a, b, across_benchmarks=True).n_queries == N  # asked for: compared
    unlabelled = make_report({"ndcg@10": v})  # a partly labelled side: not a difference
    for row in list(unlabelled.per_query.values())[1:]:
        row.relevant = {"lidar": 1}
    assert compare_reports(a, unlabelled).n_queries == N - 1


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


def test_a_saved_report_holding_infinity_is_refused_naming_where(tmp_path):
    """A per-query metric of ``Infinity`` (Python writes it; JSON has no such number) went on to
    the statistics, which said only "y must be finite numbers", naming neither file nor query."""
    import json

    import pytest

    from ragsonde.errors import QueryValidationError
    from ragsonde.evaluate.saved import load_report

    path = tmp_path / "t6.json"
    doc = {"schema_version": "1.9", "per_query": {"13": {"metrics": {"ndcg@10": float("inf")}}}}
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(QueryValidationError, match=r"t6.json: per_query.13.metrics.ndcg@10 is not"):
        load_report(path)


def test_each_side_names_its_search_mode() -> None:
    """Two runs of one collection in two modes were headed alike ("modes · local:…")."""
    v = np.full(N, 0.5)
    a, b = make_report({"ndcg@10": v}), make_report({"ndcg@10": v})
    b.search.mode, b.search.fusion = "hybrid", "dbsf"
    done = compare_reports(a, b)
    assert (done.a.search, done.b.search) == ("dense", "hybrid dbsf")
