"""This turn's features on collections ragsonde did not build (LangChain, LlamaIndex and Haystack
each writing 30 SciFact abstracts with its default settings, in qdrant-client's local mode),
through the real CLI: ``traffic`` serves what the framework's own retriever serves and calibrates
on the text its layout keeps; a mode the collection cannot serve is a VALIDATION_ERROR naming the
fix; a sparse vector another encoder made (LangChain's hybrid mode) is never searched with BM25
query terms it does not hold, while one that is BM25 is searched as LangChain searches it.

Oracles: the framework's own retriever (ids and scores), the collection's point count."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.support import Built, framework_search, lc_sparse, quiet_local_mode
from tests.support import run

pytestmark = pytest.mark.slow
K = 5


def _env(b: Built) -> dict[str, str]:
    return {"QDRANT_URL": str(b.path), "RAGSONDE_HOME": str(b.path.parent / "home")}


def _log(tmp_path: Path, queries: list[str]) -> Path:
    """A chatbot's query log: one JSON object a line, an hour apart."""
    path = tmp_path / "chat.log.jsonl"
    rows = [{"query": q, "timestamp": 1_790_000_000 + 3600 * i} for i, q in enumerate(queries)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _points(b: Built) -> list[Any]:
    from qdrant_client import QdrantClient

    client = QdrantClient(path=str(b.path))
    try:
        return client.scroll(b.collection, limit=10_000, with_payload=True)[0]
    finally:
        client.close()


def _traffic(b: Built, log: Path, *args: str) -> Any:
    return run("traffic", str(log), "-c", b.collection, "--no-record", *args, env=_env(b))


def test_traffic_serves_what_the_framework_serves_and_calibrates_on_its_text(
    built: Built, embedder, scifact_queries: list[str], tmp_path: Path
) -> None:
    with quiet_local_mode():
        theirs = framework_search(built, embedder, scifact_queries, K)
    points = _points(built)
    # Haystack's retriever answers its document id, kept in the payload as ``id``
    point_of = {str(p.payload.get("id", p.id)): str(p.id) for p in points}
    if built.framework != "haystack":
        point_of = {str(p.id): str(p.id) for p in points}

    done = _traffic(built, _log(tmp_path, scifact_queries), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["n_queries"] == len(scifact_queries)
    # one sentence of every chunk: the text was found where the layout keeps it
    assert report["calibration_sentences"] == len(points)
    # no BM25 vectors: the two BM25 signals are said to be left out, not claimed
    assert report["combination"].endswith(
        "of top1, gap, nqc, dense_nqc (bm25_nqc, rbo left out: the collection has no BM25 "
        "vectors ragsonde can query)"
    )
    by_text = {q["query"]: q for q in report["queries"]}
    for text, expected in zip(scifact_queries, theirs, strict=True):
        q = by_text[text]
        assert q["top_ids"] == [point_of[i] for i, _ in expected]
        assert q["signals"]["top1"] == pytest.approx(expected[0][1], abs=1e-5)
        assert not any(s.startswith("bm25") or s in ("rbo", "wig") for s in q["signals"])
        assert q["predicted"] is not None and 0.0 <= q["predicted"] <= 1.0

    hybrid = _traffic(built, _log(tmp_path, scifact_queries), "--mode", "hybrid")
    assert hybrid.returncode == 2
    assert "Traceback" not in hybrid.stderr
    assert "VALIDATION_ERROR" in hybrid.stderr and "dense search only" in hybrid.stderr
    assert "ragsonde ingest --sparse" in hybrid.stderr


def _lc_sparse_ids(b: Built, queries: list[str]) -> list[list[str]]:
    """LangChain's own sparse retriever on its hybrid collection: point ids per query."""
    from langchain_qdrant import QdrantVectorStore, RetrievalMode

    store = QdrantVectorStore.from_existing_collection(
        sparse_embedding=lc_sparse("bm25"),
        retrieval_mode=RetrievalMode.SPARSE,
        path=str(b.path),
        collection_name=b.collection,
    )
    try:
        return [
            [d.metadata["_id"] for d, _ in store.similarity_search_with_score(q, k=K)]
            for q in queries
        ]
    finally:
        store.client.close()


def test_a_sparse_vector_is_searched_only_when_it_is_bm25(
    langchain_hybrid: Built, scifact_queries: list[str], tmp_path: Path
) -> None:
    b, log = langchain_hybrid, _log(tmp_path, scifact_queries)
    env = _env(b)
    query = scifact_queries[0]
    sparse = run("query", query, "-c", b.collection, "--mode", "sparse", "--json", env=env)
    hybrid = _traffic(b, log, "--mode", "hybrid", "--json")
    dense = _traffic(b, log, "--json")
    assert dense.returncode == 0, dense.stderr
    signals = [q["signals"] for q in json.loads(dense.stdout)["queries"]]
    combination = json.loads(dense.stdout)["combination"]
    listed = run("collections", "list", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    (entry,) = json.loads(listed.stdout)
    assert entry["sparse_vector"] == "langchain-sparse"
    if b.framework == "langchain-hashing":
        assert entry["modes"] == ["dense"]  # before: dense, sparse, hybrid
        # before: 'success' with no result, and every BM25 signal 0 for every query
        for done in (sparse, hybrid):
            assert done.returncode == 2 and "Traceback" not in done.stderr
            error = json.loads(done.stdout)["error"]
            assert error["code"] == "VALIDATION_ERROR"
            assert (
                "sparse vector 'langchain-sparse' is not a BM25 ragsonde can query"
                in (error["message"])
            )
            assert "Use mode 'dense'" in error["message"]
        assert all(not any(s.startswith("bm25") for s in row) for row in signals)
        assert "bm25_nqc, rbo left out" in combination
        return
    # BM25 vectors LangChain wrote: searched, ranked as LangChain's own sparse retriever ranks
    assert entry["modes"] == ["dense", "sparse", "hybrid"]
    assert sparse.returncode == 0, sparse.stderr
    theirs = _lc_sparse_ids(b, [query])[0]
    assert [r["chunk_id"] for r in json.loads(sparse.stdout)["results"]] == theirs
    assert hybrid.returncode == 0, hybrid.stderr
    assert all(row["bm25_top1"] > 0 for row in signals)
    assert "left out" not in combination


def test_judging_pools_only_the_modes_the_sparse_vector_serves(
    langchain_hybrid: Built, embedder
) -> None:
    """``judge`` pools each query in every mode the collection serves: never in BM25 modes on a
    sparse vector they cannot query (each pooled query got an error there)."""
    from ragsonde.errors import QueryValidationError
    from ragsonde.labels.pool import modes_for
    from ragsonde.retriever import Retriever

    b = langchain_hybrid
    with Retriever(b.settings(), embedder=embedder) as retriever:
        if b.framework == "langchain-bm25":
            assert modes_for(retriever, b.collection, None) == ["dense", "sparse", "hybrid"]
            return
        assert modes_for(retriever, b.collection, None) == ["dense"]
        with pytest.raises(QueryValidationError, match="cannot be searched with mode hybrid"):
            modes_for(retriever, b.collection, ["dense", "hybrid"])


def test_ragsondes_own_spans_over_a_framework_collection_are_read_back(
    built: Built, embedder, scifact_queries: list[str], tmp_path: Path, monkeypatch
) -> None:
    """Round trip: ragsonde's retrieval spans (OpenTelemetry SDK, content opted in) over a
    framework's collection, written as OTLP JSON, read by ``ragsonde traffic``: the ids they
    carry are the framework's own top 3, and the top_k they ran with explains the difference."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from ragsonde import tracing
    from ragsonde.retriever import Retriever
    from ragsonde.traffic.read import read_traffic
    from tests.traffic.support import otlp_json_lines

    monkeypatch.setenv("RAGSONDE_TRACE_CONTENT", "1")
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    try:
        with Retriever(built.settings(), embedder=embedder) as retriever:
            for q in scifact_queries:
                assert retriever.retrieve({"query_text": q, "top_k": 3}).status == "success"
    finally:
        tracing.use_provider(None)
        provider.shutdown()
    traces = tmp_path / "ragsonde.otlp.json"
    traces.write_text(otlp_json_lines(exporter.get_finished_spans()), encoding="utf-8")

    with quiet_local_mode():
        theirs = framework_search(built, embedder, scifact_queries, 3)
    point_of = {str(p.payload.get("id", p.id)): str(p.id) for p in _points(built)}
    if built.framework != "haystack":
        point_of = {str(p.id): str(p.id) for p in _points(built)}
    production = {q.query: q.production for q in read_traffic([traces]).queries}
    done = _traffic(built, traces, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["n_queries"] == len(scifact_queries)
    by_text = {q["query"]: q for q in report["queries"]}
    for text, expected in zip(scifact_queries, theirs, strict=True):
        ids = [point_of[i] for i, _ in expected]
        prod = production[text]
        assert prod is not None and prod.ids == ids and prod.collection == built.collection
        q = by_text[text]
        assert q["top_ids"][:3] == ids
        assert q["production_agreement"] == pytest.approx(3 / 5)
        assert q["mismatch"] == ["top_k: production 3, replay 5"]
    assert report["production"]["explained_by"] == {"top_k": len(scifact_queries)}


def _lc_dense(b: Built, embedder, queries: list[str], k: int) -> list[list[dict[str, Any]]]:
    """LangChain's own dense retriever on its hybrid collection: each hit's metadata."""
    from langchain_qdrant import QdrantVectorStore

    from tests.integrations.support import lc_embeddings

    store = QdrantVectorStore.from_existing_collection(
        embedding=lc_embeddings(embedder), path=str(b.path), collection_name=b.collection
    )
    try:
        return [[d.metadata for d in store.similarity_search(q, k=k)] for q in queries]
    finally:
        store.client.close()


def test_mcp_tools_over_stdio_on_langchains_hybrid_collection(
    langchain_hybrid: Built, embedder, scifact_queries: list[str], tmp_path: Path
) -> None:
    """The MCP SDK's client over stdio: ``search`` serves LangChain's own rankings (sparse only
    where the vector is BM25), ``evaluate`` estimates with the traffic predictor (its classical
    half is the mean nDCG@10 of LangChain's own ranking), ``failing_queries`` reads a saved
    traffic report's weakest query."""
    import math

    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    from tests.support import home_env

    b = langchain_hybrid
    rows = b.rows[:20]  # known-item questions (titles), the first 10 labelled
    bench = tmp_path / "titles.jsonl"
    bench.write_text(
        "".join(
            json.dumps(
                {"query_id": f"t{i}", "query": r["title"]}
                | ({"relevant": [r["_id"]]} if i < 10 else {})
            )
            + "\n"
            for i, r in enumerate(rows)
        ),
        encoding="utf-8",
    )
    saved = tmp_path / "traffic.json"
    done = _traffic(b, _log(tmp_path, scifact_queries), "-o", str(saved))
    assert done.returncode == 0, done.stderr
    query = scifact_queries[0]
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "ragsonde", "mcp", "--collection", b.collection, "--root", str(tmp_path)],
        env={**home_env(b.path.parent / "home"), "QDRANT_URL": str(b.path)},
    )

    async def main() -> dict[str, Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return {
                "dense": await s.call_tool("search", {"query": query, "top_k": K}),
                "sparse": await s.call_tool(
                    "search", {"query": query, "top_k": K, "mode": "sparse"}
                ),
                "evaluate": await s.call_tool(
                    "evaluate",
                    {"benchmark": str(bench), "estimate": True, "predictor": "traffic"},
                ),
                "failing": await s.call_tool(
                    "failing_queries", {"traffic": str(saved), "limit": 1}
                ),
            }

    got = anyio.run(main)
    dense = got["dense"].structured_content
    assert not got["dense"].is_error and dense is not None
    theirs = _lc_dense(b, embedder, [query, *[r["title"] for r in rows[:10]]], 10)
    assert [r["chunk_id"] for r in dense["results"]] == [m["_id"] for m in theirs[0][:K]]
    sparse = got["sparse"].structured_content
    assert sparse is not None
    if b.framework == "langchain-hashing":
        assert got["sparse"].is_error and sparse["error"]["code"] == "VALIDATION_ERROR"
        assert "is not a BM25 ragsonde can query" in sparse["error"]["message"]
    else:
        assert [r["chunk_id"] for r in sparse["results"]] == _lc_sparse_ids(b, [query])[0]

    ev = got["evaluate"].structured_content
    assert not got["evaluate"].is_error and ev is not None, got["evaluate"].content
    ci = ev["metrics_ci"]["ndcg@10"]
    gains = []
    for r, hits in zip(rows[:10], theirs[1:], strict=True):
        ranks = [i for i, m in enumerate(hits) if m["doc_id"] == r["_id"]]
        gains.append(1 / math.log2(ranks[0] + 2) if ranks else 0.0)
    # labels with no spread take the exact bound from themselves alone (docs/estimate.md)
    assert (ci["n_labeled"], ci["n_predicted"]) == (10, 10 if len(set(gains)) > 1 else 0)
    assert ci["classical"]["estimate"] == pytest.approx(sum(gains) / len(gains), abs=1e-4)
    assert ci["low"] <= ci["estimate"] <= ci["high"]

    failing = got["failing"].structured_content
    assert not got["failing"].is_error and failing is not None
    report = json.loads(saved.read_text(encoding="utf-8"))
    lowest = min(report["queries"], key=lambda q: q["predicted"])
    assert failing["total"] == len(scifact_queries)
    assert failing["queries"][0]["query_id"] == lowest["query_id"]
    assert failing["queries"][0]["value"] == pytest.approx(lowest["predicted"])


def _titles_bench(b: Built, path: Path, labelled: int = 10, n: int = 20) -> Path:
    """Known-item questions (each abstract's title), the first ``labelled`` with their answer."""
    path.write_text(
        "".join(
            json.dumps(
                {"query_id": f"t{i}", "query": r["title"]}
                | ({"relevant": [r["_id"]]} if i < labelled else {})
            )
            + "\n"
            for i, r in enumerate(b.rows[:n])
        ),
        encoding="utf-8",
    )
    return path


def test_estimates_plans_and_comparisons_on_framework_collections(
    langchain_built: Built, llamaindex_built: Built, embedder, tmp_path: Path
) -> None:
    """``eval --estimate`` with each predictor, ``judge --plan`` and ``compare`` on collections
    LangChain and LlamaIndex built: the classical half of every estimate is the mean nDCG@10 of
    LangChain's own ranking; ``judge`` without LLM labels is refused naming the command."""
    import math

    lc = langchain_built
    bench = _titles_bench(lc, tmp_path / "titles.jsonl")
    with quiet_local_mode():
        theirs = framework_search(lc, embedder, [r["title"] for r in lc.rows[:10]], 10)
    doc_of = {str(p.id): p.payload["metadata"]["doc_id"] for p in _points(lc)}
    gains = []
    for r, hits in zip(lc.rows[:10], theirs, strict=True):
        ranks = [i for i, (pid, _) in enumerate(hits) if doc_of[pid] == r["_id"]]
        gains.append(1 / math.log2(ranks[0] + 2) if ranks else 0.0)
    expected = sum(gains) / len(gains)
    flags = ["--estimate", "--json", "--no-record", "--no-throughput"]
    spread = 10 if len(set(gains)) > 1 else 0  # no spread: the exact bound, from the labels
    for predictor, predicted in (
        ("scores", spread),
        ("traffic", spread),
        ("consensus", spread),
        ("none", 0),
    ):
        done = run(
            "eval", str(bench), "-c", lc.collection, *flags, "--predictor", predictor, env=_env(lc)
        )
        assert done.returncode == 0, (predictor, done.stderr)
        ci = json.loads(done.stdout)["metrics_ci"]["ndcg@10"]
        assert (ci["n_labeled"], ci["n_predicted"]) == (10, predicted), predictor
        assert ci["classical"]["estimate"] == pytest.approx(expected, abs=1e-4), predictor
        assert ci["low"] <= ci["estimate"] <= ci["high"]
    judge = run(
        "eval", str(bench), "-c", lc.collection, *flags, "--predictor", "judge", env=_env(lc)
    )
    assert judge.returncode == 2 and "Traceback" not in judge.stderr
    error = json.loads(judge.stdout)["error"]
    assert error["code"] == "VALIDATION_ERROR" and "ragsonde judge" in error["message"]

    plan = run("judge", str(bench), "-c", lc.collection, "--plan", "3", "--json", env=_env(lc))
    assert plan.returncode == 0, plan.stderr
    planned = json.loads(plan.stdout)
    assert planned["labelled_now"] == 10 and planned["queries_total"] == 20
    assert len(planned["plan"]) == 3
    assert {p["query_id"] for p in planned["plan"]} <= {f"t{i}" for i in range(10, 20)}

    saved = []
    for b in (lc, llamaindex_built):
        full = _titles_bench(b, tmp_path / f"{b.framework}.jsonl", labelled=20)
        out = tmp_path / f"{b.framework}.report.json"
        done = run(
            "eval", str(full), "-c", b.collection, "--no-record", "--no-throughput",
            "--save", str(out), env=_env(b),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        saved.append(json.loads(out.read_text(encoding="utf-8"))["metrics"]["ndcg@10"])
    compared = run(
        "compare",
        *(str(tmp_path / f"{f}.report.json") for f in ("langchain", "llamaindex")),
        "--json",
    )
    assert compared.returncode == 0, compared.stderr
    row = next(m for m in json.loads(compared.stdout)["metrics"] if m["metric"] == "ndcg@10")
    assert row["delta"] == pytest.approx(saved[1] - saved[0])


def test_a_collection_whose_text_no_layout_reads_is_not_calibrated_on_nothing(
    langchain_body: Built, scifact_queries: list[str], tmp_path: Path
) -> None:
    """Before: 0 calibration sentences, ``predicted`` None for every query, weak share 0 and
    exit 0. Now a VALIDATION_ERROR naming the fix; with it, every query is predicted."""
    b, log = langchain_body, _log(tmp_path, scifact_queries)
    refused = _traffic(b, log)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "VALIDATION_ERROR" in refused.stderr and "cannot be calibrated" in refused.stderr
    assert f"none of the {len(b.rows)} chunks read has text" in refused.stderr
    assert "--field text=PATH" in refused.stderr
    done = _traffic(b, log, "--field", "text=body", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["calibration_sentences"] == len(b.rows)
    assert all(q["predicted"] is not None for q in report["queries"])


def test_query_says_when_every_result_has_empty_text(langchain_body: Built) -> None:
    """Before: results with empty text and not a word (``eval`` warned, ``query`` did not)."""
    env = _env(langchain_body)
    for flags in ([], ["--json"]):
        done = run("query", "methylation", "-c", langchain_body.collection, *flags, env=env)
        assert done.returncode == 0, done.stderr
        assert "results have empty text" in done.stderr and "--field text=PATH" in done.stderr
    found = run(
        "query", "methylation", "-c", langchain_body.collection, "--json",
        "--field", "text=body", env=env,
    )  # fmt: skip
    assert found.returncode == 0 and "empty text" not in found.stderr
    texts = {r["text"] for r in langchain_body.rows}
    assert all(r["text"] in texts for r in json.loads(found.stdout)["results"])


def test_the_traffic_route_on_framework_collections(
    langchain_hybrid: Built, langchain_body: Built, embedder, scifact_queries: list[str]
) -> None:
    """``POST /v1/traffic`` over a real loopback server: the refusals are contract errors (422,
    VALIDATION_ERROR), the dense report reads no signal of a vector that is not BM25."""
    import httpx

    from ragsonde.retriever import Retriever
    from ragsonde.server.app import create_app
    from tests.support import run_server

    records = [{"query": q} for q in scifact_queries]
    answers: dict[str, httpx.Response] = {}
    for b in (langchain_hybrid, langchain_body):
        settings = b.settings()
        with (
            Retriever(settings, embedder=embedder) as r,
            run_server(create_app(settings, r)) as url,
        ):
            for mode in ("dense", "hybrid"):
                body = {"records": records, "search": {"mode": mode}}
                answers[f"{b.collection} {mode}"] = httpx.post(
                    f"{url}/v1/traffic", json=body, timeout=120
                )
    hashing = langchain_hybrid.framework == "langchain-hashing"
    for key, resp in answers.items():
        refused = key.startswith("lc_body") or (hashing and key.endswith("hybrid"))
        if refused:
            assert resp.status_code == 422, (key, resp.text)
            error = resp.json()["error"]
            assert error["code"] == "VALIDATION_ERROR"
            why = "cannot be calibrated" if key.startswith("lc_body") else "is not a BM25"
            assert why in error["message"], key
            continue
        assert resp.status_code == 200, (key, resp.text)
        report = resp.json()
        assert report["n_queries"] == len(scifact_queries)
        bm25 = [any(s.startswith("bm25") for s in q["signals"]) for q in report["queries"]]
        assert all(bm25) if not hashing else not any(bm25), key


def test_console_spans_go_to_stderr_and_traffic_names_their_format(
    langchain_built: Built, tmp_path: Path
) -> None:
    """``OTEL_TRACES_EXPORTER=console``: the spans went to stdout, inside ``query --json``'s
    document (no longer one JSON). Now on stderr; ``traffic`` on them says they are not OTLP."""
    b = langchain_built
    env = {**_env(b), "OTEL_TRACES_EXPORTER": "console", "RAGSONDE_TRACE_CONTENT": "1"}
    done = run("query", "methylation", "-c", b.collection, "-k", "3", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["total_results"] == 3  # stdout: the response alone
    assert '"name": "retrieval lc_scifact"' in done.stderr
    spans = tmp_path / "console.json"
    spans.write_text(done.stderr[done.stderr.index("{") :], encoding="utf-8")
    read = _traffic(b, spans)
    assert read.returncode == 2 and "Traceback" not in read.stderr
    assert "VALIDATION_ERROR" in read.stderr and "console spans" in read.stderr
    assert "not OTLP JSON" in read.stderr


def test_eval_in_a_mode_the_collection_cannot_serve_is_refused_not_zero(
    langchain_built: Built, tmp_path: Path
) -> None:
    """Before: nDCG 0.0000 everywhere, exit 0, ``passed: true``, and '10 queries failed' at the
    bottom of the table (the JSON said it only in ``benchmark.errors``)."""
    b = langchain_built
    bench = _titles_bench(b, tmp_path / "titles.jsonl", labelled=10, n=10)
    for flags in ([], ["--json"]):
        done = run(
            "eval", str(bench), "-c", b.collection, "--mode", "hybrid", "--no-record",
            "--no-throughput", *flags, env=_env(b),
        )  # fmt: skip
        assert done.returncode == 2 and "Traceback" not in done.stderr
        said = json.loads(done.stdout)["error"]["message"] if flags else done.stderr
        assert "dense search only" in said and "ragsonde ingest --sparse" in said
