"""``evaluate`` on a span-labelled benchmark: span metrics beside the document metrics, read
from the chunk spans ingest records; "not available" on a collection without spans."""

from __future__ import annotations

import json

import pytest

from ragsonde.config import Settings
from ragsonde.evaluate import EvalOptions
from ragsonde.evaluate.spans import Span, span_scores
from ragsonde.ingest import ingest
from ragsonde.models.points import PointRecord
from tests.support import evaluate_in

pytestmark = pytest.mark.slow

DOCS = {
    "lidar": "# Lidar\n\nLidar measures distance by timing laser pulses reflected off surfaces. "
    "It builds a point cloud of the scene.\n",
    "sonar": "# Sonar\n\nUltrasonic rangefinders emit sound pulses and listen for the echo. "
    "They are cheap and work in the dark.\n",
    "imu": "# IMU\n\nAn IMU combines accelerometers and gyroscopes. Gyroscope bias makes the "
    "heading drift over time.\n",
}
QUESTIONS = {
    "How does lidar measure distance?": ("lidar", "timing laser pulses"),
    "What makes the heading drift?": ("imu", "Gyroscope bias makes the heading drift"),
    "What do ultrasonic sensors listen for?": ("sonar", "listen for the echo"),
}


@pytest.fixture(scope="module")
def world(tmp_path_factory, embedder):
    root = tmp_path_factory.mktemp("spans")
    docs = root / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / f"{name}.md").write_text(text, encoding="utf-8")
    rows = []
    for question, (doc, excerpt) in QUESTIONS.items():
        start = DOCS[doc].index(excerpt)
        rows.append(
            {
                "query": question,
                "references": [{"doc_id": doc, "start": start, "end": start + len(excerpt)}],
            }
        )
    bench = root / "bench.jsonl"
    bench.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    settings = Settings(home=root / "home", collection="robots")
    ingest(str(docs), settings=settings, embedder=embedder)
    return root, bench, settings


def test_ingested_chunks_record_their_span_in_the_file(world, embedder):
    from ragsonde.store import open_store

    _, _, settings = world
    store = open_store(settings)
    try:
        points = [p for batch in store.scroll("robots") for p in batch]
    finally:
        store.close()
    assert len(points) == 3
    for p in points:
        text = DOCS[p.payload["doc_id"]]
        assert text[p.payload["start"] : p.payload["end"]] == p.payload["text"]
        assert p.payload["chunk_index"] == 0


def test_eval_shows_span_metrics_beside_the_document_metrics(world, embedder):
    _, bench, settings = world
    report = evaluate_in(bench, settings=settings, embedder=embedder, options=EvalOptions(k=[1, 3]))
    assert report.metrics["ndcg@1"] == 1.0  # each question finds its document first
    spans = report.spans
    assert spans is not None and spans.available
    assert set(spans.metrics) == {
        "span_recall@1",
        "span_precision@1",
        "span_iou@1",
        "span_recall@3",
        "span_precision@3",
        "span_iou@3",
        "span_precision_omega",
    }
    # each document is one chunk (its heading's section) holding the whole excerpt: recall 1,
    # precision |R| / |chunk|
    assert spans.metrics["span_recall@1"] == 1.0
    for qid, row in report.per_query.items():
        question = row.query
        doc, excerpt = QUESTIONS[question]
        chunk = DOCS[doc].split("\n\n", 1)[1].strip()  # the section under the heading
        at = DOCS[doc].index(chunk)
        ref = Span(doc, DOCS[doc].index(excerpt), DOCS[doc].index(excerpt) + len(excerpt))
        expected = span_scores([ref], [Span(doc, at, at + len(chunk))])
        assert row.metrics["span_precision@1"] == pytest.approx(expected.precision, abs=1e-6), qid
        assert row.metrics["span_precision_omega"] == pytest.approx(expected.precision, abs=1e-6)
        assert row.metrics["span_recall@3"] == 1.0
        assert row.metrics["span_precision@3"] < row.metrics["span_precision@1"]
    from ragsonde.evaluate.html import render_html_report

    page = render_html_report(report)
    assert '<th class="l">span_iou</th>' in page and "span precision_omega" in page


def test_a_collection_without_spans_says_not_available(world, embedder):
    from ragsonde.store import open_store

    _, bench, settings = world
    store = open_store(settings)
    try:
        points = [p for batch in store.scroll("robots", with_vectors=True) for p in batch]
        store.create_collection("foreign", embedder.dimension)
        store.upsert(
            "foreign",
            [
                PointRecord(
                    p.id,
                    p.vector,
                    {
                        "page_content": p.payload["text"],
                        "metadata": {"doc_id": p.payload["doc_id"]},
                    },
                )
                for p in points
            ],
        )
    finally:
        store.close()
    report = evaluate_in(
        bench,
        collection="foreign",
        settings=settings,
        embedder=embedder,
        options=EvalOptions(k=[1]),
    )
    assert report.metrics["ndcg@1"] == 1.0  # the document metrics work as before
    assert report.spans is not None and not report.spans.available
    assert "not available" in report.spans.note and report.spans.metrics == {}
    assert all("span_recall@1" not in r.metrics for r in report.per_query.values())
    from ragsonde.evaluate.html import render_html_report

    assert "Span metrics not available" in render_html_report(report)


def test_the_cli_prints_the_span_metrics(world):
    from typer.testing import CliRunner

    import ragsonde.cli
    from ragsonde.cli.app import app

    _, bench, settings = world
    ragsonde.cli._register()
    out = CliRunner().invoke(
        app,
        ["eval", str(bench), "-c", "robots", "--home", str(settings.home), "--k", "1"],
        env={"RAGSONDE_HOME": None, "QDRANT_URL": None, "RAGSONDE_QDRANT_URL": None},
    )
    assert out.exit_code == 0, out.output
    assert "span_recall" in out.stdout and "span precision_omega" in out.stdout
