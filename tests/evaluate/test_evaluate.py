"""The harness end to end: real sample docs and SciFact slices, the real model, real Edge store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytrec_eval

from ragsonde.config import Settings
from ragsonde.errors import QueryValidationError
from ragsonde.evaluate import EvalOptions, EvalReport, parse_gate
from ragsonde.evaluate.html import write_html_report
from ragsonde.ingest import ingest
from ragsonde.models.points import PointRecord
from ragsonde.samples import robotics_benchmark, robotics_docs
from ragsonde.store import open_store
from tests.support import evaluate_in

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sample_report(sample_home, embedder):
    return evaluate_in(
        robotics_benchmark(),
        settings=Settings(home=sample_home, collection="robotics"),
        embedder=embedder,
        options=EvalOptions(
            gates=[parse_gate("hit_rate@5>=0.8"), parse_gate("integrity.problems==0")]
        ),
    )


def _trec_eval(
    qrels_path_or_dict, run_path: Path, measures: set[str]
) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    for line in run_path.read_text().splitlines():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    return pytrec_eval.RelevanceEvaluator(qrels_path_or_dict, measures).evaluate(run)


@pytest.mark.slow
def test_sample_benchmark_report(sample_report):
    r = sample_report.model_dump(mode="json")
    assert r["n_queries"] == 46
    assert r["metrics"]["hit_rate@5"] >= 0.8
    assert 0.5 < r["metrics"]["ndcg@10"] <= 1.0
    assert r["integrity"]["problems"] == 0
    assert r["integrity"]["checked_results"] > 40
    assert r["benchmark"]["relevant_missing_from_collection"] == []
    for stage in ("embedding_ms", "search_ms", "post_processing_ms", "total_ms"):
        p = r["latency"][stage]
        assert 0 <= p["p50"] <= p["p95"] <= p["p99"] <= p["max"]
    assert r["latency"]["total_ms"]["p50"] >= r["latency"]["embedding_ms"]["p50"] > 0
    assert r["throughput"]["queries_per_s"] > 0
    assert [g["passed"] for g in r["gates"]] == [True, True] and sample_report.passed
    for q in r["per_query"].values():
        ids = [d for d, _ in q["retrieved"]]
        assert len(ids) == len(set(ids)), "a document counted twice"


@pytest.mark.slow
def test_metrics_equal_pytrec_eval_on_the_written_run_file(sample_report, tmp_path):
    run_file = tmp_path / "run.trec"
    sample_report.write_run(run_file)
    qrels = {
        q: rel["relevant"] for q, rel in sample_report.model_dump(mode="json")["per_query"].items()
    }
    ref = _trec_eval(qrels, run_file, {"ndcg_cut.10", "recall.5", "recip_rank", "P.5"})
    for qid, values in ref.items():
        mine = sample_report.per_query[qid].metrics
        assert mine["ndcg@10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-6)
        assert mine["recall@5"] == pytest.approx(values["recall_5"], abs=1e-6)
        assert mine["precision@5"] == pytest.approx(values["P_5"], abs=1e-6)
        assert mine["mrr"] == pytest.approx(values["recip_rank"], abs=1e-6)


@pytest.mark.slow
def test_relevant_ids_missing_from_the_collection_are_reported(sample_home, embedder, tmp_path):
    bench = tmp_path / "b.jsonl"
    bench.write_text(
        '{"query_id": "1", "query": "lidar calibration", "relevant": ["lidar"]}\n'
        '{"query_id": "2", "query": "warp drive", "relevant": ["warp-drive", "lidar"]}\n'
    )
    report = evaluate_in(
        bench,
        settings=Settings(home=sample_home, collection="robotics"),
        embedder=embedder,
        options=EvalOptions(throughput=False),
    )
    assert report.benchmark.relevant_missing_from_collection == ["warp-drive"]


@pytest.mark.slow
def test_filters_are_applied_and_checked(sample_home, embedder, tmp_path):
    bench = tmp_path / "b.jsonl"
    bench.write_text(
        '{"query_id": "1", "query": "how do I calibrate it?", "relevant": ["imu"],'
        ' "filters": {"category": "sensors"}}\n'
    )
    report = evaluate_in(
        bench,
        settings=Settings(home=sample_home, collection="robotics"),
        embedder=embedder,
        options=EvalOptions(throughput=False, ks=(5,)),
    )
    assert report.integrity.counts["filter_violated"] == 0
    assert report.integrity.checked_results > 0


@pytest.mark.slow
def test_integrity_catches_a_corrupted_chunk(tmp_path, embedder):
    settings = Settings(home=tmp_path / "home", collection="c")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gps.md").write_bytes((robotics_docs() / "gps.md").read_bytes())
    ingest(str(docs), settings=settings, embedder=embedder)
    store = open_store(settings)
    try:
        point = next(iter(store.scroll("c", with_vectors=True)))[0]
        payload = {**point.payload, "text": point.payload["text"] + " (edited by hand)"}
        store.upsert("c", [PointRecord(point.id, point.vector, payload)])
        bench = tmp_path / "b.jsonl"
        bench.write_text('{"query": "gps accuracy", "relevant": ["gps"]}\n')
        report = evaluate_in(
            bench,
            settings=settings,
            store=store,
            embedder=embedder,
            options=EvalOptions(throughput=False),
        )
    finally:
        store.close()
    assert report.integrity.counts["content_hash_mismatch"] == 1
    assert point.id in report.integrity.examples["content_hash_mismatch"][0]
    assert report.integrity.problems == 1


@pytest.mark.slow
def test_html_report_renders_in_chromium(sample_report, tmp_path):
    from tests.browser import chromium_page

    doc = sample_report.model_dump(mode="json")
    doc["per_query"]["q01"]["query"] = "<img src=x onerror=alert(1)>"
    path = tmp_path / "report.html"
    write_html_report(EvalReport.model_validate(doc), path)
    with chromium_page() as page:
        errors: list[str] = []
        dialogs: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(path.as_uri())
        assert page.locator("svg.plot").count() >= 6  # metric@k, 4 latency stages, distribution
        # One line per metric family: the six ranking metrics and judged@k.
        assert page.locator("svg.plot polyline.series").count() == 7
        # the legend sits right of the lines, never over them
        lines = [b for b in (s.bounding_box() for s in page.locator("polyline.series").all()) if b]
        right = max(b["x"] + b["width"] for b in lines)
        legend = [t.bounding_box() for t in page.locator("svg.plot text.legend").all()]
        assert len(legend) == 7 and all(b is not None and b["x"] > right for b in legend)
        # one label per query: judged@10 is low, and the page explains it instead of warning
        assert page.locator("#coverage-warning").count() == 0
        assert "standard assumption" in page.locator("#judged-note").inner_text()
        assert page.locator("#worst tr").count() == 16  # header + 15 worst queries
        assert page.locator("#metrics").inner_text().count("ndcg") == 1
        assert "<img src=x onerror=alert(1)>" in page.locator("body").inner_text()
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        assert not errors and not dialogs


@pytest.mark.slow
def test_scifact_slice_hnsw_equals_exact_and_pytrec_eval(scifact_dir, tmp_path, embedder):
    bench_all = [json.loads(x) for x in (scifact_dir / "queries.jsonl").read_text().splitlines()]
    qrels_lines = (scifact_dir / "qrels" / "test.tsv").read_text().splitlines()[1:]
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_lines:
        q, d, s = line.strip().split("\t")
        qrels.setdefault(q, {})[d] = int(s)
    chosen = list(qrels)[:15]
    wanted = {d for q in chosen for d in qrels[q]}
    corpus = [json.loads(x) for x in (scifact_dir / "corpus.jsonl").read_text().splitlines()]
    keep = [c for c in corpus if c["_id"] in wanted] + [
        c for c in corpus[:120] if c["_id"] not in wanted
    ]
    ds = tmp_path / "slice"
    (ds / "qrels").mkdir(parents=True)
    (ds / "corpus.jsonl").write_text("\n".join(json.dumps(c) for c in keep) + "\n")
    (ds / "queries.jsonl").write_text(
        "\n".join(json.dumps(q) for q in bench_all if q["_id"] in chosen) + "\n"
    )
    (ds / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\r\n"
        + "".join(f"{q}\t{d}\t1\r\n" for q in chosen for d in qrels[q])
    )
    settings = Settings(home=tmp_path / "home", collection="slice")
    hnsw = evaluate_in(
        ds,
        settings=settings,
        embedder=embedder,
        options=EvalOptions(ks=(1, 10), throughput=False),
        ingest=True,
    )
    assert hnsw.benchmark.ingested.documents == len(keep)
    assert hnsw.n_queries == 15 and hnsw.benchmark.relevant_missing_from_collection == []
    exact = evaluate_in(
        ds,
        settings=settings,
        embedder=embedder,
        options=EvalOptions(exact=True, ks=(1, 10), throughput=False),
    )
    assert exact.search.index.startswith("exact")
    assert hnsw.metrics["ndcg@10"] == pytest.approx(exact.metrics["ndcg@10"], abs=0.02)
    run_file = tmp_path / "run.trec"
    exact.write_run(run_file)
    ref = _trec_eval({q: qrels[q] for q in chosen}, run_file, {"ndcg_cut.10", "recall.10"})
    assert exact.metrics["ndcg@10"] == pytest.approx(
        sum(v["ndcg_cut_10"] for v in ref.values()) / 15, abs=1e-6
    )
    assert exact.metrics["recall@10"] == pytest.approx(
        sum(v["recall_10"] for v in ref.values()) / 15, abs=1e-6
    )
    # an ingest stopped mid-way: eval --ingest found the collection, evaluated the partial
    # one and recorded it; now it is refused, saying how to complete it
    from ragsonde.store.edge import EdgeStore

    store = EdgeStore(tmp_path / "home")
    try:
        gone = {c["_id"] for c in keep[:3]}
        ids = [p.id for b in store.scroll("slice") for p in b if p.payload["doc_id"] in gone]
        store.delete_points("slice", ids)
    finally:
        store.close()
    with pytest.raises(QueryValidationError, match="lacks 3 documents of the") as err:
        evaluate_in(ds, settings=settings, embedder=embedder, ingest=True,
                    options=EvalOptions(ks=(10,), throughput=False))  # fmt: skip
    assert f"ragsonde ingest {ds}/corpus.jsonl -c slice" in err.value.message


@pytest.mark.slow
def test_the_clock_starts_where_the_caller_says(sample_home, embedder):
    """``seconds`` counts from ``started`` (the CLI passes its command's start, so loading the
    libraries and the benchmark are on the clock), else from the call."""
    import time

    settings = Settings(home=sample_home, collection="robotics")
    opts = EvalOptions(k=[5])
    plain = evaluate_in(robotics_benchmark(), opts, settings=settings, embedder=embedder)
    earlier = time.perf_counter() - 30.0
    given = evaluate_in(
        robotics_benchmark(), opts, settings=settings, embedder=embedder, started=earlier
    )
    assert 0 < plain.seconds < 30.0
    assert given.seconds >= 30.0
