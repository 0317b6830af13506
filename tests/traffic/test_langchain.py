"""A real producer: a LangChain retriever over Qdrant, traced by OpenInference's LangChain
instrumentation into the OpenTelemetry SDK and written as OTLP JSON; ``ragsonde traffic`` reads
the file, returned ids included, and names the top_k production ran with (2, not ragsonde's 5)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from typer.testing import CliRunner

from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.traffic.read import read_traffic
from tests.traffic.support import otlp_json_lines

N_DOCS = 40


def _lc_embeddings(embedder: OnnxEmbedder) -> object:
    from langchain_core.embeddings import Embeddings

    class Local(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [list(map(float, v)) for v in embedder.embed_documents(texts)]

        def embed_query(self, text: str) -> list[float]:
            return [float(x) for x in embedder.embed_queries([text])[0]]

    return Local()


def test_a_traced_langchain_retriever_is_read_with_its_ids_and_its_top_k(
    scifact_dir: Path, embedder: OnnxEmbedder, tmp_path: Path
) -> None:
    pytest.importorskip("langchain_qdrant")
    from langchain_core.documents import Document
    from langchain_qdrant import QdrantVectorStore
    from openinference.instrumentation.langchain import LangChainInstrumentor

    with (scifact_dir / "corpus.jsonl").open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in itertools.islice(f, N_DOCS)]
    with (scifact_dir / "queries.jsonl").open(encoding="utf-8") as f:
        questions = [json.loads(line)["text"] for line in itertools.islice(f, 5)]
    path = tmp_path / "qdrant"
    store = QdrantVectorStore.from_documents(
        [Document(page_content=r["text"], metadata={"doc_id": r["_id"]}) for r in rows],
        _lc_embeddings(embedder),
        path=str(path),
        collection_name="lc_scifact",
    )
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        retriever = store.as_retriever(search_kwargs={"k": 2})
        returned = {q: [d.metadata["_id"] for d in retriever.invoke(q)] for q in questions}
    finally:
        instrumentor.uninstrument()
        store.client.close()
    traces = tmp_path / "langchain.otlp.json"
    traces.write_text(otlp_json_lines(exporter.get_finished_spans()), encoding="utf-8")

    read = {q.query: q.production for q in read_traffic([traces]).queries}
    for text, ids in returned.items():  # the ids and the collection, as the spans carry them
        prod = read[text]
        assert prod is not None and prod.ids == ids and prod.collection == "lc_scifact"

    import ragsonde.cli
    from ragsonde.cli.app import app

    ragsonde.cli._register()
    env = {"RAGSONDE_QDRANT_URL": str(path), "RAGSONDE_HOME": str(tmp_path / "home")}
    out = CliRunner().invoke(app, ["traffic", str(traces), "-c", "lc_scifact", "--json"], env=env)
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["n_queries"] == len(questions)
    for q in report["queries"]:
        assert returned[q["query"]] and all(returned[q["query"]])
        assert q["top_ids"][:2] == returned[q["query"]]  # the ids production returned, read
        assert q["production_agreement"] == pytest.approx(2 / 5)
        assert q["mismatch"] == ["top_k: production 2, replay 5"]
        assert 0.0 <= q["predicted"] <= 1.0 and isinstance(q["weak"], bool) and q["signals"]
    assert report["production"]["explained_by"] == {"top_k": len(questions)}
    assert "top_k" in report["production"]["verdict"]
