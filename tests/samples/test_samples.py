"""The sample docs and benchmark that `make demo` uses are consistent and answer their questions."""

from __future__ import annotations

from ragsonde.config import Settings
from ragsonde.evaluate import load_benchmark
from ragsonde.ingest import Document, ingest, open_source
from ragsonde.retriever import Retriever
from ragsonde.samples import demo_queries, robotics_benchmark, robotics_docs


def test_every_relevant_id_is_a_sample_page():
    pages = {d.doc_id for d in open_source(str(robotics_docs())) if isinstance(d, Document)}
    assert len(pages) == 24
    bench = load_benchmark(robotics_benchmark())
    assert len(bench.queries) == 46
    assert {r for q in bench.queries for r in q.relevant} <= pages
    assert {q["expect"] for q in demo_queries()} <= pages


def test_demo_questions_find_their_page_first(tmp_path, embedder):
    settings = Settings(home=tmp_path, collection="demo")
    ingest(str(robotics_docs()), settings=settings, embedder=embedder)
    with Retriever(settings, embedder=embedder) as r:
        for q in demo_queries():
            resp = r.retrieve({"query": q["query"], "top_k": 1})
            assert resp.results[0].metadata["doc_id"] == q["expect"], q["query"]
