"""One backend at one size, measured in a process of its own (so its memory is its own): the
store bench (:mod:`bench.bench_store`) runs this module once per backend and size::

    python -m bench._store_worker --backend edge --data DIR --out FILE [--repeats R]

``DIR`` holds the size's data as ``.npy`` files (points, urls, queries, exact truth), written by
the parent; the figures go to ``FILE`` as JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench._common import dir_size_mib, peak_rss_mib, percentile, rss_mib
from bench._store_data import BATCH, COLL, DIM, EF_SWEEP, N_URLS, K, recall, url_of

BACKENDS = ("numpy", "edge", "qdrant-local")


def _time_queries(
    search: Callable[[Any, Any], list[int]],
    queries: Sequence[Any],
    filters: Sequence[Any],
    repeats: int,
    warmup: int,
) -> tuple[dict[str, float], list[list[int]]]:
    """Median over ``repeats`` passes of each pass's p50/p95 (ms); hits of the last pass."""
    for i in range(min(warmup, len(queries))):
        search(queries[i], filters[i])
    p50s: list[float] = []
    p95s: list[float] = []
    hits: list[list[int]] = []
    for _ in range(repeats):
        ms, hits = [], []
        for q, f in zip(queries, filters, strict=True):
            t0 = time.perf_counter()
            ids = search(q, f)
            ms.append((time.perf_counter() - t0) * 1000)
            hits.append(ids)
        p50s.append(percentile(ms, 50))
        p95s.append(percentile(ms, 95))
    return {"p50": statistics.median(p50s), "p95": statistics.median(p95s)}, hits


def worker(
    backend: str, data_dir: Path, repeats: int, local_cap: tuple[int, int]
) -> dict[str, Any]:
    d = {k: np.load(data_dir / f"{k}.npy") for k in ("x", "url", "q", "q_url", "truth", "ftruth")}
    x, url, truth, ftruth = d["x"], d["url"], d["truth"], d["ftruth"]
    n = len(x)
    queries = d["q"].tolist()
    q_filters = [{"url": [url_of(int(u))]} for u in d["q_url"]]
    no_filter = [None] * len(queries)
    rss0 = rss_mib()
    out: dict[str, Any] = {"backend": backend, "points": n, "queries": len(queries)}

    if backend == "numpy":
        order = np.argsort(url, kind="stable")
        bounds = np.concatenate([[0], np.cumsum(np.bincount(url, minlength=N_URLS))])
        rows_of = {url_of(u): order[bounds[u] : bounds[u + 1]] for u in range(N_URLS)}
        xq = d["q"]

        def search(q: Any, f: Any) -> list[int]:
            qv = xq[q] if isinstance(q, int) else q
            rows = rows_of[f["url"][0]] if f else None
            s = (x if rows is None else x[rows]) @ qv
            k = min(K, len(s))
            top = np.argpartition(-s, k - 1)[:k]
            top = top[np.argsort(-s[top])]
            ranked: list[int] = (top if rows is None else rows[top]).tolist()
            return ranked

        qidx = list(range(len(queries)))  # pass row numbers: no list -> array conversion
        out["search_ms"], hits = _time_queries(search, qidx, no_filter, repeats, 20)
        out["search_filtered_ms"], fhits = _time_queries(search, qidx, q_filters, repeats, 20)
        out["recall_at_10"], out["recall_at_10_filtered"] = (
            recall(hits, truth),
            recall(fhits, ftruth),
        )
        out["data_mib"] = x.nbytes / 2**20
        out["rss_growth_mib"] = rss_mib() - rss0
        out["peak_rss_mib"] = peak_rss_mib()
        return out

    from ragsonde.config import Settings
    from ragsonde.models.points import PointRecord, SearchSpec
    from ragsonde.store import open_store

    home = data_dir / f"store-{backend}"
    settings = (
        Settings(home=home, qdrant_url=None)
        if backend == "edge"
        else Settings(home=home, qdrant_url=":memory:")
    )
    store = open_store(settings)
    store.create_collection(COLL, DIM, indexed_fields={"url": "keyword"})
    chunk_no = np.zeros(N_URLS, dtype=np.int64)
    upsert_s = 0.0
    for start in range(0, n, BATCH):
        batch = []
        for i in range(start, min(start + BATCH, n)):
            u = int(url[i])
            batch.append(
                PointRecord(
                    id=str(i),
                    vector=x[i].tolist(),
                    payload={
                        "url": url_of(u),
                        "text": f"Synthetic passage {i} from source {u}.",
                        "chunk_index": int(chunk_no[u]),
                    },
                )
            )
            chunk_no[u] += 1
        t0 = time.perf_counter()
        store.upsert(COLL, batch)
        upsert_s += time.perf_counter() - t0
    out["upsert_points_per_s"] = n / upsert_s
    t0 = time.perf_counter()
    store.build_index(COLL)
    out["build_index_s"] = time.perf_counter() - t0
    info = store.collection_info(COLL)
    out["indexed_vectors"] = info.indexed_vectors_count

    def searcher(s: Any) -> Any:
        def search(q: list[float], f: Any) -> list[int]:
            res = s.search(COLL, [SearchSpec(vector=q, limit=K, filter=f)])
            return [int(h.id) for h in res[0]]

        return search

    # Local mode scans every point in Python (a filtered query takes seconds at 50k+): one pass
    # over a capped number of queries, recall on those same queries.
    nq, nf, reps, warm = len(queries), len(queries), repeats, 20
    if backend != "edge":
        nq, nf, reps, warm = min(nq, local_cap[0]), min(nf, local_cap[1]), 1, 3
    out["repeats"], out["queries"], out["queries_filtered"] = reps, nq, nf
    out["search_ms"], hits = _time_queries(
        searcher(store), queries[:nq], no_filter[:nq], reps, warm
    )
    out["search_filtered_ms"], fhits = _time_queries(
        searcher(store), queries[:nf], q_filters[:nf], reps, warm
    )
    out["recall_at_10"] = recall(hits, truth[:nq])
    out["recall_at_10_filtered"] = recall(fhits, ftruth[:nf])
    out["rss_growth_mib"] = rss_mib() - rss0

    if backend == "edge":
        from ragsonde.store.edge import EdgeStore

        sweep = []
        for ef in EF_SWEEP[1:]:
            s = EdgeStore(home, hnsw_ef=ef)  # shares the open shard (reference-counted)
            lat, h = _time_queries(searcher(s), queries, no_filter, 1, 10)
            flat, fh = _time_queries(searcher(s), queries, q_filters, 1, 10)
            sweep.append(
                {
                    "hnsw_ef": ef,
                    "search_ms": lat,
                    "search_filtered_ms": flat,
                    "recall_at_10": recall(h, truth),
                    "recall_at_10_filtered": recall(fh, ftruth),
                }
            )
            s.close()
        out["hnsw_ef_sweep"] = sweep
        store.close()
        out["disk_mib"] = dir_size_mib(home)
        t0 = time.perf_counter()
        store = open_store(settings)
        store.search(COLL, [SearchSpec(vector=queries[0], limit=K)])
        out["reopen_first_search_ms"] = (time.perf_counter() - t0) * 1000
        t0 = time.perf_counter()
        store.search(COLL, [SearchSpec(vector=queries[1], limit=K)])
        out["reopen_second_search_ms"] = (time.perf_counter() - t0) * 1000
    store.close()
    out["peak_rss_mib"] = peak_rss_mib()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", required=True, choices=BACKENDS)
    ap.add_argument("--data", required=True, type=Path, help="the size's .npy files")
    ap.add_argument("--out", required=True, type=Path, help="where the JSON figures go")
    ap.add_argument("--repeats", type=int, default=1, help="passes over the queries")
    ap.add_argument("--local-queries", type=int, default=100, help="qdrant-local unfiltered")
    ap.add_argument("--local-filtered-queries", type=int, default=30, help="qdrant-local filtered")
    args = ap.parse_args()
    cap = (args.local_queries, args.local_filtered_queries)
    args.out.write_text(json.dumps(worker(args.backend, args.data, args.repeats, cap)))


if __name__ == "__main__":
    main()
