"""Quantization and HNSW losses, on a SciFact slice big enough for them to matter: the ladder's
counts equal independent counts made from two plain evaluation runs (relevant document in the
exact run's top k, not in the approximate run's)."""

from __future__ import annotations

from typing import Any

from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.evaluate import EvalOptions, EvalReport, evaluate
from ragsonde.explain import MissesReport, explain_report
from ragsonde.workspace import Workspace
from tests.explain.support import FILLERS, Indexes

K = 10


def _eval(ix: Indexes, embedder: OnnxEmbedder, collection: str, **search: Any) -> EvalReport:
    settings = ix.settings.model_copy(update={"collection": collection})
    with Workspace(settings, embedder=embedder) as ws:
        return evaluate(
            ix.bench,
            options=EvalOptions(k=[1, K], search=search, throughput=False),
            workspace=ws,
        )


def _lost(exact: EvalReport, approx: EvalReport) -> int:
    """(query, relevant document) pairs in the exact top k and not in the approximate one."""
    n = 0
    for qid, row in exact.per_query.items():
        truth, got = list(exact.run[qid])[:K], list(approx.run[qid])[:K]
        n += sum(1 for d, g in row.relevant.items() if g > 0 and d in truth and d not in got)
    return n


def _explain(ix: Indexes, embedder: OnnxEmbedder, report: EvalReport) -> MissesReport:
    """The ladder with the search parameters the report says ran (``search.params``)."""
    settings = ix.settings.model_copy(update={"collection": report.collection})
    with Workspace(settings, embedder=embedder) as ws:
        return explain_report(report, ix.bench, k=K, workspace=ws)


def _missed(report: EvalReport) -> int:
    return sum(
        1
        for qid, row in report.per_query.items()
        for d, g in row.relevant.items()
        if g > 0 and d not in list(report.run[qid])[:K]
    )


def test_quantization_without_rescoring(scifact_indexes: Indexes, embedder: OnnxEmbedder) -> None:
    ix = scifact_indexes
    quantized = _eval(ix, embedder, "binary", quantization_rescore=False)
    exact = _eval(ix, embedder, "binary", exact=True)
    section = _explain(ix, embedder, quantized)
    assert quantized.misses is section and section.pairs == _missed(quantized)
    lost = _lost(exact, quantized)
    assert lost > 0, "binary quantization lost nothing: the slice is too easy to test with"
    # below the full-scan threshold the engine scans every point: HNSW loses nothing here
    assert section.counts["quantization"] == lost and section.counts["ann"] == 0
    for q in section.per_query.values():
        for m in q.misses:
            if m.stage == "quantization":
                after = m.evidence["rank_full_precision"]
                assert isinstance(after, int) and after <= K
                assert m.evidence["quantization"] == "binary-1bit"
                assert m.evidence["rescore"] is False


def test_the_ann_count_equals_exact_vs_hnsw(
    scifact_indexes: Indexes, embedder: OnnxEmbedder
) -> None:
    ix = scifact_indexes
    hnsw = _eval(ix, embedder, "weak_hnsw", hnsw_ef=1)
    exact = _eval(ix, embedder, "weak_hnsw", exact=True)
    section = _explain(ix, embedder, hnsw)
    lost = _lost(exact, hnsw)
    assert lost > 0, "the weak graph lost nothing: the test could not fail"
    assert section.counts["ann"] == lost
    assert section.counts["quantization"] == 0 and "quantization" not in section.not_measurable
    assert sum(section.counts.values()) == section.pairs == _missed(hnsw)
    ann = [m for q in section.per_query.values() for m in q.misses if m.stage == "ann"]
    assert all(m.evidence["hnsw_ef"] == "1" for m in ann)
    assert all(isinstance(r := m.evidence["rank_exact"], int) and r <= K for m in ann)
    # retrievability over the whole collection, fillers included: 25 queries reach few of them
    r = section.retrievability
    assert r is not None and r.queries == len(hnsw.per_query) and r.k == K
    assert r.documents > FILLERS and r.dead > r.documents - K * r.queries
    assert 0.9 < r.gini < 1.0


def test_qdrant_local_says_not_measurable(tmp_path, embedder: OnnxEmbedder) -> None:
    """qdrant-client's local mode keeps plain vectors: quantization and HNSW cannot be relaxed,
    and the report says so instead of counting zero quietly."""
    from ragsonde.config import Settings
    from ragsonde.store import open_store
    from tests.support import fill

    settings = Settings(home=tmp_path, qdrant_url=":memory:", collection="docs")
    store = open_store(settings)
    try:
        fill(store, embedder)
        bench = tmp_path / "b.jsonl"
        bench.write_text(
            '{"query_id": "q", "query": "how does a laser rangefinder measure distance", '
            '"relevant": ["gps"]}\n',
            encoding="utf-8",
        )
        from ragsonde.explain import explain_query

        with Workspace(settings, store=store, embedder=embedder) as ws:
            section = explain_query(bench, "q", k=1, workspace=ws)
    finally:
        store.close()
    assert set(section.not_measurable) >= {"quantization", "ann", "chunking"}
    assert "plain vectors" in section.not_measurable["quantization"]
    (miss,) = section.per_query["q"].misses
    outcomes = {s.stage: s.outcome for s in miss.steps}
    assert outcomes["quantization"] == outcomes["ann"] == "not_measurable"
    assert miss.stage == "ranking"
