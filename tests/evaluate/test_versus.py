"""Two embedders on one corpus: the real local model (A) against an OpenAI-compatible embedder
served by the loopback fake (B), on the sample robotics docs and benchmark.

The fake answers deterministic hash-seeded vectors: an embedder that knows nothing about meaning,
so B must come out significantly worse, and the no-regression gate must fail on it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

import ragsonde.cli.compare  # registers the command: the app stays a group
import ragsonde.cli.eval  # noqa: F401  (registers the command on the app)
from ragsonde.cli.app import app
from ragsonde.config import DEFAULT_EMBEDDER, Settings
from ragsonde.embedders.local import LocalEmbedder
from ragsonde.errors import DimensionMismatchError, QueryValidationError
from ragsonde.evaluate import EvalOptions, load_benchmark
from ragsonde.evaluate.versus import VersusReport, evaluate_versus, versus_collection
from ragsonde.samples import robotics_benchmark, robotics_docs
from ragsonde.store import open_store
from ragsonde.testing import FakeEmbeddingAPI

HASHED = "openai:hashed-64"
A_COLL = "robotics__local-sentence-transformers-all-minilm-l6-v2"
B_COLL = "robotics__openai-hashed-64"
N_QUERIES = len(load_benchmark(robotics_benchmark()).queries)
SMALL = 15


@pytest.fixture(scope="module")
def api() -> Iterator[FakeEmbeddingAPI]:
    with FakeEmbeddingAPI(openai_dim=64) as server:
        yield server


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("versushome")


@pytest.fixture(scope="module")
def small_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 15 sample queries: runs on collections that exist cost only their queries."""
    path = tmp_path_factory.mktemp("bench") / "small.jsonl"
    lines = robotics_benchmark().read_text(encoding="utf-8").splitlines()[:SMALL]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def settings(home: Path, api: FakeEmbeddingAPI) -> Settings:
    return Settings(home=home, collection="robotics", openai_base_url=f"{api.url}/v1")


@pytest.fixture(scope="module")
def versus(settings: Settings, embedder: LocalEmbedder) -> VersusReport:
    return evaluate_versus(
        robotics_benchmark(),
        (embedder, HASHED),
        options=EvalOptions(throughput=False),
        corpus=str(robotics_docs()),
        settings=settings,
    )


def _per_query(report: dict, metric: str) -> np.ndarray:
    ids = sorted(report["per_query"])
    return np.asarray([report["per_query"][q]["metrics"][metric] for q in ids])


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x - y, axis=axis)


def test_collection_names_are_derived_from_the_embedders() -> None:
    assert versus_collection("robotics", DEFAULT_EMBEDDER) == A_COLL
    assert versus_collection("robotics", HASHED) == B_COLL
    assert versus_collection("kb", "cohere:embed-english-v3.0") == "kb__cohere-embed-english-v3-0"


@pytest.mark.slow
def test_both_collections_are_ingested_with_their_own_dimensions(
    versus: VersusReport, settings: Settings, api: FakeEmbeddingAPI
) -> None:
    assert (versus.a.collection, versus.b.collection) == (A_COLL, B_COLL)
    assert (versus.a.embedder, versus.b.embedder) == (DEFAULT_EMBEDDER, HASHED)
    for report in (versus.a, versus.b):
        assert report.benchmark.ingested.documents == 24
        assert report.benchmark.relevant_missing_from_collection == []
        assert report.n_queries == N_QUERIES and not report.benchmark.errors
    store = open_store(settings)
    try:
        a, b = store.collection_info(A_COLL), store.collection_info(B_COLL)
    finally:
        store.close()
    assert (a.dimension, b.dimension) == (384, 64)
    assert a.points_count > 0 and b.points_count > 0
    assert {r.path for r in api.requests} == {"/v1/embeddings"}
    assert all(r.body["model"] == "hashed-64" for r in api.requests)


@pytest.mark.slow
def test_b_is_significantly_worse_and_the_p_values_are_scipys(versus: VersusReport) -> None:
    a_doc, b_doc = versus.a.model_dump(mode="json"), versus.b.model_dump(mode="json")
    a, b = _per_query(a_doc, "ndcg@10"), _per_query(b_doc, "ndcg@10")
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
    versus: VersusReport, settings: Settings, embedder: LocalEmbedder, small_bench: Path
) -> None:
    again = evaluate_versus(
        small_bench,
        (embedder, HASHED),
        options=EvalOptions(ks=(10,), throughput=False),
        settings=settings,
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
        evaluate_versus(
            robotics_benchmark(),
            (embedder, HASHED),
            collections=("robotics_fresh", A_COLL),
            settings=settings,
        )
    with pytest.raises(DimensionMismatchError):
        evaluate_versus(
            robotics_benchmark(),
            (embedder, HASHED),
            collections=(B_COLL, A_COLL),
            settings=settings,
        )


@pytest.mark.slow
def test_bad_requests_fail_before_any_work(settings: Settings, embedder: LocalEmbedder) -> None:
    bench = robotics_benchmark()
    with pytest.raises(QueryValidationError, match="exactly two embedders"):
        evaluate_versus(bench, (HASHED,), settings=settings)
    with pytest.raises(QueryValidationError, match="both embedders would use collection"):
        evaluate_versus(bench, (HASHED, HASHED), settings=settings)
    with pytest.raises(QueryValidationError, match=r"not computed.*add its cutoff"):
        evaluate_versus(bench, (embedder, HASHED), settings=settings, metrics=["ndcg@20"])
    with pytest.raises(QueryValidationError, match="alpha"):
        evaluate_versus(bench, (embedder, HASHED), settings=settings, alpha=1.5)
    with pytest.raises(QueryValidationError, match="Unknown metric"):
        evaluate_versus(bench, (embedder, HASHED), settings=settings, metrics=["ndgc@10"])
    # the message names the argument, not the CLI flag
    with pytest.raises(QueryValidationError, match="has no corpus to ingest") as info:
        evaluate_versus(bench, (embedder, HASHED), collection="nowhere", settings=settings)
    assert info.value.field == "ingest" and "`ragsonde ingest`" in info.value.message


# --- the CLI ---------------------------------------------------------------------------------


@pytest.fixture
def cli_env(monkeypatch: pytest.MonkeyPatch, api: FakeEmbeddingAPI) -> None:
    for name in ("QDRANT_URL", "RAGSONDE_QDRANT_URL", "RAGSONDE_EMBEDDER", "RAGSONDE_COLLECTION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{api.url}/v1")


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
@pytest.mark.usefixtures("cli_env", "versus")
def test_cli_json_save_and_the_gate_failing(
    home: Path, small_bench: Path, tmp_path: Path, validate_report: Callable[[dict], None]
) -> None:
    saved = tmp_path / "versus.json"
    out = CliRunner().invoke(
        app, _eval(home, small_bench, "--json", "--gate-no-regression", "--save", str(saved))
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
    a, b = _per_query(doc["a"], "ndcg@10"), _per_query(doc["b"], "ndcg@10")
    assert ndcg["p_ttest"] == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-12)
    assert ndcg["verdict"] == "worse"
    assert json.loads(saved.read_text()) == doc
    assert "significant regression" in out.stderr and "ndcg@10" in out.stderr


@pytest.mark.slow
@pytest.mark.usefixtures("cli_env", "versus")
def test_cli_tables_and_a_passing_gate(home: Path, small_bench: Path) -> None:
    # Both embedders find every relevant page in the top 100 of 24 pages: no regression there.
    out = CliRunner().invoke(
        app, _eval(home, small_bench, "--k", "10,100", "-m", "recall@100", "--gate-no-regression")
    )
    assert out.exit_code == 0, out.output
    for text in (A_COLL, B_COLL, f"B vs A on {SMALL} queries", "recall@100", "PASS"):
        assert text in out.stdout, text
    assert "W/T/L" in out.stdout


@pytest.mark.slow
@pytest.mark.usefixtures("cli_env")
def test_cli_misuse_is_a_validation_error(home: Path, small_bench: Path, tmp_path: Path) -> None:
    alone = CliRunner().invoke(
        app, ["eval", str(small_bench), "--home", str(home), "--gate-no-regression"]
    )
    assert alone.exit_code == 2 and "--versus" in alone.stderr
    html = CliRunner().invoke(
        app, _eval(home, small_bench, "--report", str(tmp_path / "r.html"), "--json")
    )
    assert html.exit_code == 2, html.output
    assert json.loads(html.stdout)["error"]["code"] == "VALIDATION_ERROR"
