"""Single-query latency end to end vs the bare model's encode, in the same run.

    .venv/bin/python -m bench.bench_query [--quick] [--queries N] [--repeats R] [--no-torch]

Builds a collection from SciFact abstracts (the first ``--docs`` of them) in a scratch embedded
store, then, for each query text, interleaves (a) the bare encode of the query by the default
backend (the ONNX embedder's ``embed_queries([q])``: the floor) and (b) ``Retriever.retrieve`` end
to end on the same embedder instance, so both see the same machine load. Reports p50/p95/p99 of
each and their ratio (target: end-to-end p95 <= 1.3 x the bare ONNX encode's p95), and batch-of-N
vs N single queries. For reference, torch's bare ``SentenceTransformer.encode`` of the first 100
queries, once, in a pass of its own after the others (torch's OpenMP threads keep spinning after a
call, and would slow the ONNX calls interleaved with them). Prints a table and writes
``bench/results/query.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: One OpenBLAS thread, set before NumPy loads. qdrant-client's local mode (the LangChain peer's
#: store) searches with NumPy; OpenBLAS's idle threads then spin on the 2 cores and slow whatever
#: runs next (the model's forward pass), which made the peer figures depend on call order.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from bench._common import SCIFACT, require_scifact, write_results
from ragsonde.config import Settings
from ragsonde.embedders import Embedder, get_embedder
from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.models.points import PointRecord
from ragsonde.retriever import Retriever
from ragsonde.store import open_store

MODEL = "sentence-transformers/all-MiniLM-L6-v2"


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


def load(n_docs: int, n_queries: int) -> tuple[list[dict[str, str]], list[str]]:
    docs = []
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            docs.append({"id": d["_id"], "title": d["title"], "text": f"{d['title']} {d['text']}"})
            if len(docs) >= n_docs:
                break
    queries = []
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            queries.append(json.loads(line)["text"])
            if len(queries) >= n_queries:
                break
    return docs, queries


def langchain_peer(
    docs: list[dict[str, str]],
    vecs: np.ndarray,
    queries: list[str],
    embedder: Embedder,
    repeats: int,
    edge_retriever: Retriever,
) -> dict[str, Any] | None:
    """The same search through LangChain's QdrantVectorStore, the code a user would write.

    Like for like: both sides on qdrant-client's local mode (LangChain cannot drive Qdrant Edge),
    the same embedder object (LangChain's ``Embeddings`` over it) and the same points. Beside
    it, each on its default embedded store: ragsonde on Qdrant Edge (``edge_retriever``, same
    points). All three are interleaved per query, rotating which goes first.
    """
    try:
        from langchain_core.embeddings import Embeddings
        from langchain_qdrant import QdrantVectorStore
        from qdrant_client import models
    except ImportError:
        print("langchain-qdrant not installed (make bench-deps): LangChain peer skipped")
        return None

    class STEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            rows: list[list[float]] = embedder.embed_documents(texts).tolist()
            return rows

        def embed_query(self, text: str) -> list[float]:
            row: list[float] = embedder.embed_queries([text])[0].tolist()
            return row

    from ragsonde.store.client import QdrantClientStore

    store = QdrantClientStore(":memory:")
    client = store._client  # one client, one copy of the data, for both sides
    client.create_collection(
        "lc", vectors_config=models.VectorParams(size=384, distance=models.Distance.COSINE)
    )
    client.upsert(  # the vectors the ragsonde side stored: embedded once per run
        "lc",
        [
            models.PointStruct(
                id=i,
                vector=v.tolist(),
                payload={"page_content": d["text"], "metadata": {"doc_id": d["id"]}},
            )
            for i, (d, v) in enumerate(zip(docs, vecs, strict=True))
        ],
    )
    lc = QdrantVectorStore(client=client, collection_name="lc", embedding=STEmbeddings())
    settings = Settings(qdrant_url=":memory:", collection="lc")
    retriever = Retriever(settings, store=store, embedder=embedder)
    for q in queries[:5]:
        lc.similarity_search_with_score(q, k=10)
        retriever.retrieve({"query_text": q, "top_k": 10})

    def run_lc(q: str) -> None:
        lc.similarity_search_with_score(q, k=10)

    def run_rs(q: str) -> None:
        resp = retriever.retrieve({"query_text": q, "top_k": 10})
        assert resp.status == "success", resp.error

    def run_edge(q: str) -> None:
        resp = edge_retriever.retrieve({"query_text": q, "top_k": 10})
        assert resp.status == "success", resp.error

    sides: list[tuple[Callable[[str], None], list[float]]] = [
        (run_lc, []),
        (run_rs, []),
        (run_edge, []),
    ]
    for r in range(repeats):
        for i, q in enumerate(queries):
            # Rotate which side goes first, so no side always follows the same other one.
            shift = (i + r) % len(sides)
            for fn, ms in sides[shift:] + sides[:shift]:
                t0 = time.perf_counter()
                fn(q)
                ms.append((time.perf_counter() - t0) * 1000)
    lc_ms, rs_ms, edge_ms = (ms for _, ms in sides)
    return {
        "backend": "qdrant-client local mode (both)",
        "points": len(docs),
        "queries": len(queries) * repeats,
        "langchain_ms": {"p50": pct(lc_ms, 50), "p95": pct(lc_ms, 95)},
        "ragsonde_ms": {"p50": pct(rs_ms, 50), "p95": pct(rs_ms, 95)},
        "ratio_p50": pct(rs_ms, 50) / pct(lc_ms, 50),
        "target": "ragsonde faster (ratio < 1), like for like (same local-mode store)",
        "target_met": pct(rs_ms, 50) < pct(lc_ms, 50),
        "defaults": {  # each on its default embedded store: not the target, shown beside
            "ragsonde_edge_ms": {"p50": pct(edge_ms, 50), "p95": pct(edge_ms, 95)},
            "ratio_p50": pct(edge_ms, 50) / pct(lc_ms, 50),
            "ratio_p95": pct(edge_ms, 95) / pct(lc_ms, 95),
        },
    }


def torch_encode(queries: list[str], repeats: int) -> dict[str, float]:
    """torch's bare single-query encode (the pre-ONNX floor), for reference: its own pass."""
    from ragsonde.embedders.local import LocalEmbedder

    model = LocalEmbedder(MODEL)._load()
    for q in queries[:10]:
        model.encode([q], normalize_embeddings=True, show_progress_bar=False)
    ms: list[float] = []
    for _ in range(repeats):
        for q in queries:
            t0 = time.perf_counter()
            model.encode([q], normalize_embeddings=True, show_progress_bar=False)
            ms.append((time.perf_counter() - t0) * 1000)
    return {"p50": pct(ms, 50), "p95": pct(ms, 95), "p99": pct(ms, 99)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer docs and queries")
    ap.add_argument("--docs", type=int, default=None)
    ap.add_argument("--queries", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=None, help="runs of the query set (3; quick 1)")
    ap.add_argument("--no-torch", action="store_true", help="skip torch's reference encode")
    args = ap.parse_args()
    require_scifact()
    n_docs = args.docs or (200 if args.quick else 2000)
    n_queries = args.queries or (50 if args.quick else 300)
    args.repeats = args.repeats or (1 if args.quick else 3)
    docs, queries = load(n_docs, n_queries)

    # The default backend, as `ragsonde query` builds it: the one instance the retriever uses.
    embedder = get_embedder(Settings(embedder=f"local:{MODEL}"))
    if not isinstance(embedder, OnnxEmbedder):
        raise SystemExit(f"the default backend is not ONNX here ({embedder!r}): see the README")
    embedder.load()
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(home=Path(tmp), collection="bench")
        store = open_store(settings)
        store.create_collection("bench", embedder.dimension, indexed_fields={"doc_id": "keyword"})
        vecs = embedder.embed_documents([d["text"] for d in docs])
        store.upsert(
            "bench",
            [
                PointRecord(
                    id=str(i), vector=v.tolist(), payload={"text": d["text"], "doc_id": d["id"]}
                )
                for i, (d, v) in enumerate(zip(docs, vecs, strict=True))
            ],
        )
        store.build_index("bench")
        retriever = Retriever(settings, store=store, embedder=embedder)
        for q in queries[:10]:  # warm-up: caches, allocator, thread pools
            embedder.embed_queries([q])
            retriever.retrieve({"query_text": q})

        bare: list[float] = []
        e2e: list[float] = []
        stage: dict[str, list[float]] = {
            "embedding_ms": [],
            "search_ms": [],
            "post_processing_ms": [],
        }
        for _ in range(args.repeats):
            for q in queries:
                t0 = time.perf_counter()
                embedder.embed_queries([q])
                bare.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                resp = retriever.retrieve({"query_text": q, "top_k": 10})
                e2e.append((time.perf_counter() - t0) * 1000)
                if resp.status != "success":
                    raise SystemExit(f"query failed: {resp.error}")
                for k in stage:
                    stage[k].append(getattr(resp.timings, k))

        batch_n = min(100, len(queries))
        batch_times, single_times = [], []
        bare_batch_times, bare_single_times = [], []
        for _ in range(args.repeats):
            # The model's own ceiling: one encode of the whole batch vs one encode per query.
            t0 = time.perf_counter()
            embedder.embed_queries(queries[:batch_n])
            bare_batch_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            for q in queries[:batch_n]:
                embedder.embed_queries([q])
            bare_single_times.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            out = retriever.retrieve_batch(
                {"queries": [{"query_text": q} for q in queries[:batch_n]]}
            )
            batch_times.append(time.perf_counter() - t0)
            assert out.status == "success"
            t0 = time.perf_counter()
            for q in queries[:batch_n]:
                retriever.retrieve({"query_text": q})
            single_times.append(time.perf_counter() - t0)
        peer = langchain_peer(
            docs, vecs, queries[: min(100, len(queries))], embedder, args.repeats, retriever
        )
        store.close()
    # The first 100 queries, once: torch is only the reference, and slow on a loaded machine.
    torch_bare = None if args.no_torch else torch_encode(queries[:100], 1)

    result = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": {"cpus": __import__("os").cpu_count(), "python": platform.python_version()},
        "collection_points": len(docs),
        "queries": len(queries),
        "repeats": args.repeats,
        "backend": embedder.backend,
        "bare_encode": "OnnxEmbedder.embed_queries([q]), the instance the retriever uses",
        "bare_encode_ms": {"p50": pct(bare, 50), "p95": pct(bare, 95), "p99": pct(bare, 99)},
        "torch_bare_encode_ms": torch_bare,
        "end_to_end_ms": {"p50": pct(e2e, 50), "p95": pct(e2e, 95), "p99": pct(e2e, 99)},
        "stages_p50_ms": {k: statistics.median(v) for k, v in stage.items()},
        "ratio_p95": pct(e2e, 95) / pct(bare, 95),
        "ratio_p50": pct(e2e, 50) / pct(bare, 50),
        "target_ratio_p95": 1.3,
        "batch": {
            "size": batch_n,
            "batch_qps": batch_n / statistics.median(batch_times),
            "single_qps": batch_n / statistics.median(single_times),
            "speedup": statistics.median(single_times) / statistics.median(batch_times),
            "bare_model_speedup": statistics.median(bare_single_times)
            / statistics.median(bare_batch_times),
        },
    }
    result["batch"]["share_of_model_ceiling"] = (
        result["batch"]["speedup"] / result["batch"]["bare_model_speedup"]
    )
    result["langchain_peer"] = peer
    result["openblas_threads"] = os.environ.get("OPENBLAS_NUM_THREADS")
    result["target_met"] = result["ratio_p95"] <= 1.3
    write_results("query", result, quick=args.quick)

    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"single-query latency, {len(docs)} points, {len(e2e)} queries (ms)")
    for col in ("", "p50", "p95", "p99"):
        table.add_column(col, justify="right")
    rows = [
        ("bare encode, ONNX (the floor)", "bare_encode_ms"),
        ("ragsonde end to end, ONNX", "end_to_end_ms"),
        ("bare encode, torch (reference)", "torch_bare_encode_ms"),
    ]
    for name, key in rows:
        d = result[key]
        if d is None:
            continue
        table.add_row(name, f"{d['p50']:.2f}", f"{d['p95']:.2f}", f"{d['p99']:.2f}")
    Console().print(table)
    print(
        f"end-to-end / bare p95 = {result['ratio_p95']:.3f} (target <= 1.3: "
        f"{'met' if result['target_met'] else 'MISSED'}); stage p50s: "
        + ", ".join(f"{k} {v:.2f}" for k, v in result["stages_p50_ms"].items())
    )
    if peer:
        print(
            f"qdrant-client local mode, same data: LangChain similarity_search_with_score p50 "
            f"{peer['langchain_ms']['p50']:.2f} ms vs ragsonde {peer['ragsonde_ms']['p50']:.2f} ms "
            f"(ragsonde/LangChain = {peer['ratio_p50']:.2f}; target < 1)"
        )
        d = peer["defaults"]
        print(
            f"each on its default store: LangChain (local mode) p50 "
            f"{peer['langchain_ms']['p50']:.2f} ms vs ragsonde (Qdrant Edge) "
            f"{d['ragsonde_edge_ms']['p50']:.2f} ms (= {d['ratio_p50']:.2f}; p95 "
            f"{d['ratio_p95']:.2f})"
        )
    b = result["batch"]
    print(
        f"batch of {b['size']}: {b['batch_qps']:.0f} q/s vs single {b['single_qps']:.0f} q/s "
        f"= {b['speedup']:.1f}x"
    )


if __name__ == "__main__":
    main()
