"""``tune`` end to end on a SciFact slice: the real model, the real engine, the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ragsonde.config import Settings, load_settings
from ragsonde.errors import QueryValidationError
from ragsonde.retriever import Retriever
from ragsonde.store import open_store
from ragsonde.tune import Grid, TuneOptions, TuneReport, save_config, tune
from ragsonde.tune.grid import Aggregation, hybrid
from ragsonde.tune.html import render_html
from ragsonde.tune.variants import Bm25Params, Hnsw, Quantization
from tests.tune.support import SLICE_QUERIES, fill_from_slice

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]

SMALL = Grid(
    quantization=[Quantization(), Quantization(kind="scalar"), Quantization(kind="binary", bits=1)],
    hnsw=[Hnsw()],
    hnsw_ef=[64],
    rescore=[True],
    oversampling=[2.0],
    fusion=[
        hybrid("dbsf"),
        hybrid("rrf", rrf_k=60, fusion_weights=(2.0, 1.0)),
        hybrid("linear", fusion_weights=(0.7, 0.3)),
    ],
    bm25=[Bm25Params(k1=0.9, b=0.4)],
    aggregation=[Aggregation(), Aggregation(method="sum", n=2)],
)


@pytest.fixture(scope="module")
def report(slice_home: Path, scifact_slice: Path, embedder) -> TuneReport:
    settings = Settings(home=slice_home, collection="slice")
    return tune(
        scifact_slice,
        settings=settings,
        embedder=embedder,
        options=TuneOptions(grid=SMALL, folds=3),
    )


def test_every_configuration_is_measured(report: TuneReport) -> None:
    # exact + 3 variants x 1 setting + 3 fusions x 2 BM25 encodings, each with 2 aggregations
    assert len(report.configurations) == (1 + 3 + 3 * 2) * 2
    assert report.n_queries == SLICE_QUERIES and report.n_points > 500
    for c in report.configurations:
        assert 0.0 < c.ndcg <= 1.0 and 0.0 <= c.metrics["recall@100"] <= 1.0
        assert c.latency_p95_ms >= c.latency_p50_ms > 0
    exact = report.config("dense none/m16-efc100 exact max")
    assert exact.recall_vs_exact == 1.0 and exact.hnsw_loss == 0.0
    # MiniLM on SciFact: a slice of its own relevant documents is easy, but not trivial
    assert 0.6 < exact.ndcg < 1.0


def test_quantization_is_verified_and_costs_what_it_should(report: TuneReport) -> None:
    for v in report.variants:
        assert v.indexed
        assert v.quantization_verified is (None if v.spec.quantization.kind == "none" else True)
    scalar = report.variant("int8/m16-efc100").stats
    binary = report.variant("binary-1bit/m16-efc100").stats
    assert 0.24 < scalar.memory_ratio < 0.27
    assert 1 / 32 * 0.95 < binary.memory_ratio < 1 / 32 * 1.2
    q = report.config("dense binary-1bit/m16-efc100 ef64 rescore-x2 max")
    assert isinstance(q.quantization_loss, float) and q.hnsw_loss is not None
    assert q.recall_vs_exact == pytest.approx(1 - q.hnsw_loss - q.quantization_loss, abs=0.15)


def test_aggregation_and_fusion_change_the_ranking(report: TuneReport) -> None:
    dbsf = report.config("hybrid dbsf/pf100 none/m16-efc100 ef64 max")
    weighted = report.config("hybrid rrf-k60/w2:1/pf100 none/m16-efc100 ef64 max")
    summed = report.config("hybrid dbsf/pf100 none/m16-efc100 ef64 sum2")
    rebm25 = report.config("hybrid dbsf/pf100 none/m16-efc100/bm25-k0.9-b0.4 ef64 max")
    assert dbsf.per_query_ndcg != weighted.per_query_ndcg
    assert dbsf.per_query_ndcg != summed.per_query_ndcg
    assert dbsf.per_query_ndcg != rebm25.per_query_ndcg
    linear = report.config("hybrid linear/w0.7:0.3/pf100 none/m16-efc100 ef64 max")
    assert linear.per_query_ndcg not in (dbsf.per_query_ndcg, weighted.per_query_ndcg)
    assert 0.5 < linear.ndcg <= 1.0


def test_cross_validation_and_recommendation(report: TuneReport) -> None:
    assert set(report.cross_validation) == {"all", "dense", "hybrid"}
    for cv in report.cross_validation.values():
        assert cv.folds == 3 and sum(f.n_held_out for f in cv.per_fold) == SLICE_QUERIES
        assert 0.0 < cv.held_out_ndcg <= 1.0
        assert cv.held_out_se is not None and 0.0 < cv.held_out_se < 0.5
        assert cv.spread is not None and cv.spread.min <= cv.spread.mean <= cv.spread.max
    rec = report.recommendation
    assert rec.config is not None and rec.config in {c.id for c in report.configurations}
    assert rec.config in report.pareto


def test_guards_warn_on_a_small_unindexed_collection(report: TuneReport) -> None:
    text = " ".join(report.warnings)
    assert "is small" in text and "full-scan threshold" in text
    # below Qdrant's indexing threshold the engine builds no dense graph, even after optimize;
    # its BM25 vectors count as indexed and must not hide that
    assert "not indexed (0 of" in text and "To index it" in text


def test_users_collection_is_untouched(report: TuneReport, slice_home: Path) -> None:
    store = open_store(Settings(home=slice_home))
    try:
        assert store.list_collections() == ["slice"]
        assert store.collection_info("slice").points_count == report.n_points
    finally:
        store.close()


def test_report_json_and_html(report: TuneReport) -> None:
    data = json.loads(report.model_dump_json())
    first = data["configurations"][0]
    assert data["schema_version"] == "2.1" and "per_query_ndcg" not in first
    # a configuration's search is spelled as [search] is: one block, the names SearchParams has
    assert first["search"]["exact"] is True and first["mode"] == first["search"]["mode"]
    assert TuneReport.model_validate(data).pareto == report.pareto
    page = render_html(report)
    assert page.count("<svg") == 2 and report.recommendation.config in page
    assert "<script" not in page


def test_saved_config_round_trips_through_settings(
    report: TuneReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = report.config("hybrid dbsf/pf100 none/m16-efc100 ef64 max")
    path = tmp_path / "tuned.toml"
    values = save_config(report, path, config_id=chosen.id)
    monkeypatch.setenv("RAGSONDE_CONFIG", str(path))
    settings = load_settings()
    assert settings.search.hnsw_ef == 64 and settings.search.fusion == "dbsf"
    assert settings.collection == "slice"
    assert values["search"]["prefetch_limit"] == 100 and values["search"]["aggregation"] == "max"
    rrf = report.config("hybrid rrf-k60/w2:1/pf100 none/m16-efc100 ef64 max")
    save_config(report, path, config_id=rrf.id)
    assert load_settings().search.fusion == "rrf"
    linear = report.config("hybrid linear/w0.7:0.3/pf100 none/m16-efc100 ef64 max")
    values = save_config(report, path, config_id=linear.id)
    assert "rrf_k" not in values["search"]
    settings = load_settings()
    assert (settings.search.fusion, settings.search.fusion_weights) == ("linear", (0.7, 0.3))
    # the tuned copy it points at; "" is no collection: refused, not left out as before
    assert save_config(report, path, config_id=linear.id, collection="slice-tuned")["collection"]
    assert load_settings().collection == "slice-tuned"
    with pytest.raises(QueryValidationError) as e:
        save_config(report, path, config_id=linear.id, collection="")
    assert e.value.field == "collection"
    assert load_settings().collection == "slice-tuned"  # the file as it was


def test_local_mode_says_quantization_is_not_measurable(
    scifact_slice: Path, embedder, tmp_path: Path
) -> None:
    settings = Settings(home=tmp_path, collection="slice", qdrant_url=":memory:")
    store = open_store(settings)
    try:
        fill_from_slice(store, "slice", scifact_slice, embedder)
        grid = SMALL.model_copy(update={"fusion": [], "bm25": [], "aggregation": [Aggregation()]})
        rep = tune(
            scifact_slice,
            settings=settings,
            store=store,
            embedder=embedder,
            options=TuneOptions(grid=grid, folds=2),
        )
    finally:
        store.close()
    assert rep.backend == "qdrant-local"
    skipped = [v for v in rep.variants if v.spec.quantization.kind != "none"]
    assert skipped and all(not v.measurable for v in skipped)
    assert all(v.note and "not measurable on this backend" in v.note for v in skipped)
    assert {c.variant for c in rep.configurations} == {"none/m16-efc100"}


def test_cli_tune_json_save_html_apply(
    slice_home: Path, scifact_slice: Path, tmp_path: Path, embedder
) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(
        'quantization = [{kind = "none"}, {kind = "scalar"}]\nhnsw = [{m = 16, ef_construct = 100}]\n'
        'hnsw_ef = [64]\nrescore = [true]\noversampling = [2.0]\nfusion = [{fusion = "dbsf"}]\n'
        'aggregation = [{method = "max"}]\nbm25 = []\n'
    )
    env = {k: v for k, v in os.environ.items() if k != "QDRANT_URL"}
    env["RAGSONDE_HOME"] = str(slice_home)
    args = ["tune", str(scifact_slice), "-c", "slice", "--grid", str(grid), "--folds", "2"]
    args += ["--max-memory-mb", "0.4", "--json", "--save-config", str(tmp_path / "tuned.toml")]
    args += ["--html", str(tmp_path / "t.html"), "--apply", "slice_tuned"]
    out = subprocess.run(
        [sys.executable, "-m", "ragsonde", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    rec = data["recommendation"]
    # under 0.4 MB only the int8 codes fit (~560 x 384 floats are ~0.85 MB)
    assert rec["config"].startswith("dense int8/") and rec["feasible"] >= 1
    page = (tmp_path / "t.html").read_text()
    assert "<svg" in page and "other fold splits" in page and "standard error" in page
    assert 'collection = "slice_tuned"' in (tmp_path / "tuned.toml").read_text()
    settings = Settings(home=slice_home, collection="slice_tuned")
    store = open_store(settings)
    try:
        assert store.collection_info("slice_tuned").points_count == data["n_points"]
        with Retriever(settings, store=store, embedder=embedder) as r:
            resp = r.retrieve({"query_text": "vitamin D and bone density", "top_k": 3})
        assert resp.status == "success" and len(resp.results) == 3
        store.delete_collection("slice_tuned")
    finally:
        store.close()
    bad = subprocess.run(
        [sys.executable, "-m", "ragsonde", "tune", str(scifact_slice), "-c", "nope", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        cwd=ROOT,
    )
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["error"]["code"] == "COLLECTION_NOT_FOUND"


def test_hybrid_default_is_dbsf_and_rrf_stays_selectable(slice_home: Path, embedder) -> None:
    assert Settings().search.fusion == "dbsf"
    store = open_store(Settings(home=slice_home))
    query = {"query_text": "vitamin D and bone density", "top_k": 5, "mode": "hybrid"}
    try:
        scores = {}
        for fusion in ("dbsf", "rrf"):
            settings = Settings(home=slice_home, collection="slice", search={"fusion": fusion})
            with Retriever(settings, store=store, embedder=embedder) as r:
                resp = r.retrieve(query)
            assert resp.status == "success" and len(resp.results) == 5
            scores[fusion] = [x.raw_score for x in resp.results]
        # RRF scores are sums of 1/(60 + rank), never above 2/60; DBSF sums normalised scores
        assert max(scores["rrf"]) <= 2 / 60 + 1e-6 < max(scores["dbsf"])
    finally:
        store.close()


def _cli(args: list[str], home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("QDRANT_URL", "RAGSONDE_CONFIG")}
    env["RAGSONDE_HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "ragsonde", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=ROOT,
    )


def test_saved_config_drives_query_and_eval(
    report: TuneReport, slice_home: Path, scifact_slice: Path, tmp_path: Path
) -> None:
    """tune --save-config, then `query --config` and `eval --config` search as tuned."""
    rrf = report.config("hybrid rrf-k60/w2:1/pf100 none/m16-efc100 ef64 max")
    hybrid = tmp_path / "hybrid.toml"
    save_config(report, hybrid, config_id=rrf.id)
    assert "--config hybrid.toml" in hybrid.read_text()
    query = ["query", "vitamin D and bone density", "-k", "5", "--json"]
    tuned = _cli([*query, "--config", str(hybrid)], slice_home)
    plain = _cli([*query, "-c", "slice"], slice_home)
    assert tuned.returncode == 0 == plain.returncode, tuned.stderr + plain.stderr
    tuned_scores = [r["raw_score"] for r in json.loads(tuned.stdout)["results"]]
    plain_scores = [r["raw_score"] for r in json.loads(plain.stdout)["results"]]
    # the file's mode (hybrid) and weighted RRF (k=60): fused scores are below 3/60; the
    # default dense search gives cosines
    assert len(tuned_scores) == 5 and max(tuned_scores) < 3 / 60 < min(plain_scores)
    # the root option reads the same file
    root = _cli(["--config", str(hybrid), *query], slice_home)
    assert [r["raw_score"] for r in json.loads(root.stdout)["results"]] == tuned_scores

    ndcg: dict[str, float] = {}
    labels: dict[str, str] = {}
    docs: dict[str, dict[str, float]] = {}
    for agg in ("max", "sum2"):
        chosen = report.config(f"dense none/m16-efc100 exact {agg}")
        path = tmp_path / f"{agg}.toml"
        save_config(report, path, config_id=chosen.id)
        args = ["eval", str(scifact_slice), "--k", "10", "--no-throughput", "--json"]
        out = _cli([*args, "--config", str(path)], slice_home)
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert data["search"]["exact"] is True and data["search"]["mode"] == "dense"
        labels[agg] = data["search"]["aggregation"]
        ndcg[agg] = data["metrics"]["ndcg@10"]
        docs[agg] = {d: s for row in data["per_query"].values() for d, s in row["retrieved"]}
        # eval scores as the sweep measured (the sweep fetched 100 chunks, eval as many as k
        # needs: with a sum, a document's second chunk may fall on either side of that)
        assert ndcg[agg] == pytest.approx(chosen.ndcg, abs=1e-4 if agg == "max" else 0.03)
    assert labels == {"max": "max", "sum2": "sum2"}
    # a sum of two chunk scores lifts a document above its best chunk's cosine
    assert any(docs["sum2"][d] > 1.0 for d in docs["sum2"])
    assert all(s <= 1.0 for s in docs["max"].values())


def test_a_missing_or_bad_config_file_is_a_validation_error(
    slice_home: Path, tmp_path: Path
) -> None:
    missing = _cli(["query", "x", "--json", "--config", str(tmp_path / "nope.toml")], slice_home)
    assert missing.returncode == 2
    error = json.loads(missing.stdout)["error"]
    assert error["code"] == "VALIDATION_ERROR" and "nope.toml" in error["message"]
    bad = tmp_path / "bad.toml"
    bad.write_text('fusion = "dbsf"\nrrf_k = 10\n')
    for command in (["eval", "somewhere"], ["serve"], ["ingest", "somewhere"]):
        out = _cli([*command, "--config", str(bad)], slice_home)
        assert out.returncode == 2, (command, out.stderr)
        assert "VALIDATION_ERROR" in out.stderr and "bad.toml" in out.stderr
        assert "rrf_k" in out.stderr


def test_the_recommendation_is_tested_against_the_current_configuration(
    report: TuneReport, slice_home: Path, scifact_slice: Path
) -> None:
    """The current side is what `ragsonde eval` scores on the collection as it is; tune's side
    is each query's held-out score; the verdict follows the paired test, never the means."""
    vs = report.versus_current
    assert vs is not None
    assert vs.current_search.mode == "dense" and vs.current_index.hnsw_m == 16
    with Retriever(Settings(home=slice_home, collection="slice")) as r:
        from ragsonde.evaluate import EvalOptions, evaluate

        plain = evaluate(
            scifact_slice, workspace=r.workspace, options=EvalOptions(k=[10], throughput=False)
        )
    assert vs.current_ndcg == pytest.approx(plain.metrics["ndcg@10"], abs=1e-6)  # rounded
    cv = report.cross_validation["all"]
    assert vs.tuned_held_out_ndcg == pytest.approx(cv.held_out_ndcg, abs=1e-9)
    assert vs.chosen_per_fold == [f.chosen for f in cv.per_fold]
    c = vs.comparison
    assert c.wins + c.ties + c.losses == SLICE_QUERIES
    assert (vs.verdict == "adopt") is (c.significant and c.delta > 0)
    assert vs.verdict in report.recommendation.reason
    assert f"{c.ci_low:+.4f}" in vs.reason


def test_every_saved_search_key_is_what_a_query_then_runs(
    report: TuneReport, slice_home: Path, tmp_path: Path
) -> None:
    """Tune's saved config is a surface like any other: each [search] key it writes is the value
    the response says ran, and its [index] is what the warning compares with the collection."""
    for config_id in (
        "hybrid rrf-k60/w2:1/pf100 none/m16-efc100 ef64 max",
        "hybrid linear/w0.7:0.3/pf100 none/m16-efc100 ef64 sum2",
    ):
        path = tmp_path / "tuned.toml"
        values = save_config(report, path, config_id=config_id)
        with Retriever(load_settings(config=path, home=slice_home)) as r:
            resp = r.retrieve({"query": "vitamin D and bone density"})
        assert resp.status == "success" and resp.search is not None
        ran = resp.search.model_dump()
        for key, value in values["search"].items():
            assert ran[key] == (tuple(value) if isinstance(value, list) else value), key
        assert resp.index is not None and set(values["index"]) <= set(resp.index.model_dump())
