"""The signals and the report's statistics, against their definitions computed another way
(brute force, scipy) or by hand."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest

from ragsonde.models.params import SearchParams
from ragsonde.traffic.predictor import query_signals
from ragsonde.traffic.records import Production
from ragsonde.traffic.replay import Ranking, Replay
from ragsonde.traffic.signals import (
    agreement_at_top,
    idf_signals,
    overlap,
    ratio,
    rbo,
    score_signals,
    wig,
)
from ragsonde.traffic.views import agreement, mismatch, wilson


def _rbo_by_definition(a: list[str], b: list[str], p: float, depth: int) -> float:
    """RBO truncated at ``depth``: (1 - p) Σ p^(d-1) |a[:d] ∩ b[:d]| / d, sets built anew."""
    return (1 - p) * sum(
        p ** (d - 1) * len(set(a[:d]) & set(b[:d])) / d for d in range(1, depth + 1)
    )


ids = st.lists(st.sampled_from("abcdefghijklmnop"), unique=True, max_size=16)


@given(ids, ids)
def test_rbo_is_its_definition(a: list[str], b: list[str]) -> None:
    assert rbo(a, b, 0.9, 20) == pytest.approx(_rbo_by_definition(a, b, 0.9, 20))


def _ranking(ids: list[str]) -> Ranking:
    return Ranking(tuple(ids), tuple(1.0 - i / 100 for i in range(len(ids))))


@given(ids, ids, ids)
def test_the_served_rankings_agreement_with_each_input_is_rbo_at_k(
    served: list[str], dense: list[str], bm25: list[str]
) -> None:
    """``rbo_dense``/``rbo_bm25``: the served list against each ranking fused into it, RBO
    truncated at k (the served list's length), by the definition computed anew."""
    replay = Replay(text="q", served=_ranking(served), dense=_ranking(dense), bm25=_ranking(bm25))
    got = query_signals(replay, None, k=5)
    if not served:
        assert "rbo_dense" not in got and "rbo_bm25" not in got
        return
    assert got["rbo_dense"] == pytest.approx(_rbo_by_definition(served, dense, 0.9, 5))
    assert got["rbo_bm25"] == pytest.approx(_rbo_by_definition(served, bm25, 0.9, 5))


def test_a_served_list_that_is_the_dense_top_k_agrees_with_it_fully() -> None:
    dense = list("abcdefghij")
    replay = Replay(
        text="q", served=_ranking(dense[:4]), dense=_ranking(dense), bm25=_ranking(list("xyzd"))
    )
    got = query_signals(replay, None, k=4)
    assert got["rbo_dense"] == pytest.approx(1 - 0.9**4)
    # BM25 shares only "d", 4th in both: seen at depth 4 alone
    assert got["rbo_bm25"] == pytest.approx(0.1 * 0.9**3 * 1 / 4)
    dense_only = Replay(text="q", served=_ranking(dense[:4]), dense=_ranking(dense))
    assert "rbo_dense" not in query_signals(dense_only, None, k=4)  # no BM25: not a fusion


def test_agreement_at_top_by_hand() -> None:
    dense, bm25 = list("abcd"), list("cxab")
    assert agreement_at_top("a", [dense, bm25]) == pytest.approx((1 / 1 + 1 / 3) / 2)
    assert agreement_at_top("c", [dense, bm25]) == pytest.approx((1 / 3 + 1 / 1) / 2)
    assert agreement_at_top("x", [dense, bm25]) == pytest.approx((0 + 1 / 2) / 2)
    assert agreement_at_top("z", [dense, bm25]) == 0.0
    assert agreement_at_top("a", [list("a"), list("a")]) == 1.0


def test_ratio_by_hand() -> None:
    assert ratio([8.0, 4.0, 2.0], 2) == 2.0  # best over the 2nd
    assert ratio([8.0, 4.0, 2.0], 10) == 4.0  # fewer than k: over the last
    assert ratio([8.0, 0.0], 2) == 0.0 and ratio([], 3) == 0.0


def test_rbo_of_identical_and_disjoint_rankings() -> None:
    same = list("abcdefghijklmnopqrst")
    assert rbo(same, same) == pytest.approx(1 - 0.9**20)
    assert rbo(list("abc"), list("xyz")) == 0.0


def test_overlap_and_agreement_by_hand() -> None:
    assert overlap(list("abcd"), list("dcxy"), k=4) == 0.5
    assert overlap([], list("ab")) == 0.0
    # production returned 3, the replay 5, all 3 among them: 3 / max(3, 5)
    assert agreement(list("abc"), list("cbaxy")) == 0.6
    assert agreement([], []) == 1.0


def test_score_signals_by_hand() -> None:
    scores = [0.9, 0.7, 0.5, 0.3]
    got = score_signals(scores, k=3)
    assert got["top1"] == 0.9 and got["gap"] == pytest.approx(0.4)
    top = [0.9, 0.7, 0.5]
    assert got["nqc"] == pytest.approx(statistics.pstdev(top) / statistics.mean(scores))
    assert got["zscore"] == pytest.approx((0.9 - 0.7) / statistics.pstdev(top))
    assert score_signals([]) == {}


def test_wig_and_idf_by_hand() -> None:
    assert wig([4.0, 2.0, 0.0], k=2, terms=4) == pytest.approx(3.0 / 2.0)
    assert wig([], k=2, terms=4) == 0.0
    got = idf_signals([1, 10, 0], n_docs=100)
    idf = [math.log(1 + (100 - df + 0.5) / (df + 0.5)) for df in (1, 10, 0)]
    assert got["max_idf"] == pytest.approx(idf[2]) and got["avg_idf"] == pytest.approx(sum(idf) / 3)
    assert got["scq"] == pytest.approx(1 * idf[0] + (1 + math.log(10)) * idf[1])


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (57, 300), (300, 300)])
def test_wilson_interval_is_scipys(k: int, n: int) -> None:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(ci.low, abs=1e-3) and hi == pytest.approx(ci.high, abs=1e-3)


def test_the_setting_that_explains_production_is_named() -> None:
    params = SearchParams(top_k=5, score_threshold=0.2, mode="dense")
    replay = list("abcde")
    shorter = Production(ids=list("abc"))  # the same ranking, cut at 3: top_k
    assert mismatch(shorter, replay, params, "docs") == ["top_k: production 3, replay 5"]
    other = Production(ids=list("xyz"))  # three other ids: no setting explains it
    assert mismatch(other, replay, params, "docs") == [
        "ids: production returned other documents (0 of its 3 among the replay's 5)"
    ]
    logged = Production(ids=list("ab"), threshold=0.5, collection="old", mode="HYBRID", top_k=5)
    assert mismatch(logged, replay, params, "docs") == [
        "collection: production old, replay docs",
        "threshold: production 0.5, replay 0.2",
        "mode: production HYBRID, replay dense",
    ]
    assert mismatch(Production(ids=list("ab"), mode="Dense"), replay[:2], params, "docs") == []
    longer = Production(ids=list("abcdefgh"))  # more ids than the replay's top_k: asked for more
    assert mismatch(longer, replay, params, "docs") == [
        "top_k: production at least 8 (it returned 8 ids), replay 5"
    ]
    cut = mismatch(Production(ids=list("abcde")), replay[:1], params, "docs")
    assert cut == ["threshold: replay 0.2 kept 1 of its top_k 5, production returned 5"]


def test_a_verdict_names_a_setting_only_for_what_it_explains() -> None:
    """A top_k differing while production returns wholly other documents: replaying with
    production's top_k would not give users' results, and the verdict says so."""
    from collections import Counter

    from ragsonde.traffic.views import production_verdict

    example = "top_k: production 3, replay 5"
    both = production_verdict(Counter({"top_k": 4, "ids": 4}), example, 4, 0.0)
    assert "Replay with production's top_k" in both and "also returns other documents" in both
    only_k = production_verdict(Counter({"top_k": 4}), example, 4, 0.6)
    assert "also" not in only_k and "embedder" not in only_k
    only_ids = production_verdict(Counter({"ids": 2}), None, 4, 0.9)
    assert "no logged setting explains it" in only_ids and "2 of 4" in only_ids
    agree = production_verdict(Counter(), None, 4, 0.95)
    assert agree.startswith("Production and the replay agree")


def test_the_weak_flag_is_read_as_far_as_it_was_measured() -> None:
    """A hybrid run's weak share of a third read as "a third of my queries fail" where about a
    sixth did (SciFact: 36% marked, 16% weak); sparse mode was never measured."""
    from ragsonde.traffic.predictor import WEAK_BELOW
    from ragsonde.traffic.report import flag_reading

    assert "it over-flags" in flag_reading("hybrid", WEAK_BELOW, labelled=False)
    assert "not measured" in flag_reading("sparse", WEAK_BELOW, labelled=False)
    assert "triage list" in flag_reading("dense", WEAK_BELOW, labelled=False)
    assert "chosen by hand" in flag_reading("dense", 0.3, labelled=False)
    assert "set from the labels" in flag_reading("hybrid", 0.86, labelled=True)
