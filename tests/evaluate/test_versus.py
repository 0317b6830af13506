"""Two embedders on one corpus: the real local model (A) against an OpenAI-compatible embedder
served by the loopback fake (B), on the sample robotics docs and benchmark.

The fake answers deterministic hash-seeded vectors: an embedder that knows nothing about meaning,
so B must come out significantly worse, and the no-regression gate must fail on it. The run
itself is the session fixture ``versus`` (tests/conftest.py); its CLI is tested in
tests/cli/test_versus_cli.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from ragsonde.config import DEFAULT_EMBEDDER, Settings
from ragsonde.embedders import Embedder
from ragsonde.errors import DimensionMismatchError, QueryValidationError
from ragsonde.evaluate import EvalOptions, load_benchmark
from ragsonde.evaluate.versus import VersusReport, versus_collection
from ragsonde.samples import robotics_benchmark
from ragsonde.store import open_store
from ragsonde.testing import FakeEmbeddingAPI
from tests.support import A_COLL, B_COLL, HASHED, SMALL, per_query, versus_in

N_QUERIES = len(load_benchmark(robotics_benchmark()).queries)


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def test_collection_names_are_derived_from_the_embedders() -> None:
    assert versus_collection("robotics", DEFAULT_EMBEDDER) == A_COLL
    assert versus_collection("robotics", HASHED) == B_COLL
    assert versus_collection("kb", "cohere:embed-english-v3.0") == "kb__cohere-embed-english-v3-0"


@pytest.mark.slow
def test_both_collections_are_ingested_with_their_own_dimensions(
    versus: VersusReport, versus_settings: Settings, versus_api: FakeEmbeddingAPI
) -> None:
    assert (versus.a.collection, versus.b.collection) == (A_COLL, B_COLL)
    assert (versus.a.embedder, versus.b.embedder) == (DEFAULT_EMBEDDER, HASHED)
    for report in (versus.a, versus.b):
        assert report.benchmark.ingested.documents == 24
        assert report.benchmark.relevant_missing_from_collection == []
        assert report.n_queries == N_QUERIES and not report.benchmark.errors
    store = open_store(versus_settings)
    try:
        a, b = store.collection_info(A_COLL), store.collection_info(B_COLL)
    finally:
        store.close()
    assert (a.dimension, b.dimension) == (384, 64)
    assert a.points_count > 0 and b.points_count > 0
    assert {r.path for r in versus_api.requests} == {"/v1/embeddings"}
    assert all(r.body["model"] == "hashed-64" for r in versus_api.requests)


@pytest.mark.slow
def test_b_is_significantly_worse_and_the_p_values_are_scipys(versus: VersusReport) -> None:
    a_doc, b_doc = versus.a.model_dump(mode="json"), versus.b.model_dump(mode="json")
    a, b = per_query(a_doc, "ndcg@10"), per_query(b_doc, "ndcg@10")
    assert a.mean() > 0.5 > b.mean()
    m = versus.comparison.metric("ndcg@10")
    assert (m.mean_a, m.mean_b) == (pytest.approx(a.mean()), pytest.approx(b.mean()))
    assert m.p_ttest == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-12)
    perm = stats.permutation_test(
        (b, a),
        _mean_diff,
        permutation_type="samples",
        vectorized=True,
        n_resamples=10000,
        random_state=np.random.default_rng(0),
    )
    assert m.p_permutation == pytest.approx(perm.pvalue, rel=1e-12)
    ci = stats.bootstrap(
        (b, a),
        _mean_diff,
        paired=True,
        vectorized=True,
        n_resamples=10000,
        random_state=np.random.default_rng(0),
    ).confidence_interval
    assert (m.ci_low, m.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    assert m.ci_high < 0 and m.significant and m.verdict == "worse"
    assert (m.wins, m.ties, m.losses) == (
        int((b > a).sum()),
        int((b == a).sum()),
        int((b < a).sum()),
    )
    assert "ndcg@10" in [r.metric for r in versus.comparison.regressions()]
    doc = versus.model_dump(mode="json")
    assert set(doc) == {"schema_version", "kind", "a", "b", "comparison"}
    assert doc["comparison"]["n_queries"] == N_QUERIES
    json.dumps(doc, allow_nan=False)


@pytest.mark.slow
def test_existing_collections_are_reused_and_checked(
    versus: VersusReport,
    versus_settings: Settings,
    embedder: Embedder,
    versus_bench: Path,
) -> None:
    again = versus_in(
        versus_bench,
        (embedder, HASHED),
        options=EvalOptions(ks=(10,), throughput=False),
        settings=versus_settings,
        metrics=["ndcg@10"],
        n_resamples=999,
    )
    assert again.a.benchmark.ingested is None and again.b.benchmark.ingested is None
    for side, before in ((again.a, versus.a), (again.b, versus.b)):
        assert side.n_queries == SMALL
        for qid, entry in side.per_query.items():
            assert entry.metrics["ndcg@10"] == before.per_query[qid].metrics["ndcg@10"]
    assert again.comparison.names == ["ndcg@10"]
    with pytest.raises(DimensionMismatchError, match=r"hashed-64.*64-dimensional"):
        versus_in(
            robotics_benchmark(),
            (embedder, HASHED),
            collections=("robotics_fresh", A_COLL),
            settings=versus_settings,
        )
    with pytest.raises(DimensionMismatchError):
        versus_in(
            robotics_benchmark(),
            (embedder, HASHED),
            collections=(B_COLL, A_COLL),
            settings=versus_settings,
        )


@pytest.mark.slow
def test_bad_requests_fail_before_any_work(versus_settings: Settings, embedder: Embedder) -> None:
    bench = robotics_benchmark()
    with pytest.raises(QueryValidationError, match="exactly two embedders"):
        versus_in(bench, (HASHED,), settings=versus_settings)
    with pytest.raises(QueryValidationError, match="both embedders would use collection"):
        versus_in(bench, (HASHED, HASHED), settings=versus_settings)
    with pytest.raises(QueryValidationError, match=r"not computed.*add its cutoff"):
        versus_in(bench, (embedder, HASHED), settings=versus_settings, metrics=["ndcg@20"])
    with pytest.raises(QueryValidationError, match="alpha"):
        versus_in(bench, (embedder, HASHED), settings=versus_settings, alpha=1.5)
    with pytest.raises(QueryValidationError, match="Unknown metric"):
        versus_in(bench, (embedder, HASHED), settings=versus_settings, metrics=["ndgc@10"])
    # the message names the argument, not the CLI flag
    with pytest.raises(QueryValidationError, match="has no corpus to ingest") as info:
        versus_in(bench, (embedder, HASHED), collection="nowhere", settings=versus_settings)
    assert info.value.field == "ingest" and "`ragsonde ingest`" in info.value.message
