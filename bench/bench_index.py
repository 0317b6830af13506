"""Index health at 100k chunks: HNSW vs exact search on real queries (``eval --ann-vs-exact``).

    .venv/bin/python -m bench.bench_index [--quick] [--points 100000]

SciFact's corpus has 663k word pieces: no chunking of it yields 100k real chunks (the smallest
chunk the chunker accepts, 16 word pieces, gives about 45k). So the collection is the 9,675 real
SciFact chunks (dense, copied from the bench's ``scifact`` collection, not re-embedded) plus
near-duplicate distractors: each is a real chunk's vector plus Gaussian noise (cosine to its source
about 0.85), renormalised, with a ``doc_id`` that is never relevant. That keeps the vectors'
distribution the real model's (clusters where the corpus has topics) and makes the neighbourhoods
of the relevant chunks denser than the corpus alone: a harder index, not an easier one.

Then ``evaluate(..., ann_vs_exact=True)`` runs the 300 SciFact test queries (embedded by the real
model) twice, HNSW and exact, and reports the index's recall@k against exact search and both
search latencies. It is the same code path as ``ragsonde eval DATASET --ann-vs-exact``.
``--quick``: the quick SciFact slice (20 queries) padded to 20k points. Writes
``bench/results/index.json``.
"""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING

import numpy as np

from bench._common import (
    ROOT,
    SCIFACT,
    command,
    machine,
    print_table,
    require_scifact,
    verdict,
    write_results,
)

if TYPE_CHECKING:
    from ragsonde.models.store import Store

BENCH_HOME = ROOT / ".ragsonde-bench"
NOISE_SIGMA = 0.032  # per dimension: |noise| ~ 0.63 on 384 dims -> cosine ~0.85 to the source


def build(store: Store, source: str, target: str, points: int, seed: int = 7) -> float:
    """Copy ``source`` into ``target`` and pad it with distractors up to ``points``. Seconds."""
    from ragsonde.errors import CollectionNotFoundError
    from ragsonde.ingest import INDEXED_FIELDS
    from ragsonde.models.points import PointRecord

    try:
        if store.collection_info(target).points_count == points:
            return 0.0
        store.delete_collection(target)
    except CollectionNotFoundError:
        pass
    info = store.collection_info(source)
    t0 = time.perf_counter()
    store.create_collection(target, info.dimension, indexed_fields=INDEXED_FIELDS)
    vectors: list[np.ndarray] = []
    for batch in store.scroll(source, batch_size=1024, with_vectors=True):
        store.upsert(target, [PointRecord(p.id, p.vector, p.payload) for p in batch])
        vectors.extend(np.asarray(p.vector, dtype=np.float32) for p in batch)
    base = np.stack(vectors)
    rng = np.random.default_rng(seed)
    need = points - len(base)
    written = 0
    while written < need:
        n = min(2048, need - written)
        src = rng.integers(0, len(base), size=n)
        vec = base[src] + rng.normal(0.0, NOISE_SIGMA, size=(n, base.shape[1])).astype(np.float32)
        vec /= np.linalg.norm(vec, axis=1, keepdims=True)
        recs = []
        for j in range(n):
            i = written + j
            recs.append(
                PointRecord(
                    f"00000000-0000-4000-8000-{i:012d}",
                    vec[j].tolist(),
                    {
                        "text": f"distractor {i}",
                        "doc_id": f"distractor-{i}",
                        "url": f"https://distractor.invalid/{i % 1000}",
                        "title": "distractor",
                        "section": "",
                        "chunk_index": 0,
                    },
                )
            )
        store.upsert(target, recs)
        written += n
    store.build_index(target)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--points", type=int, default=None)
    args = ap.parse_args()
    require_scifact()
    points = args.points or (20_000 if args.quick else 100_000)

    from bench._common import evaluate_in
    from ragsonde.config import Settings
    from ragsonde.embedders.local import LocalEmbedder
    from ragsonde.evaluate import EvalOptions
    from ragsonde.store import open_store

    embedder = LocalEmbedder("sentence-transformers/all-MiniLM-L6-v2")
    settings = Settings(home=BENCH_HOME, collection="scifact")
    store = open_store(settings)
    from bench.bench_modes import QUICK_COLLECTION

    source = QUICK_COLLECTION if args.quick else "scifact"
    target = f"{source}_{points // 1000}k"
    dataset = SCIFACT
    if args.quick:
        from bench.bench_modes import quick_dataset

        dataset = quick_dataset()
    try:
        if source not in store.list_collections():
            evaluate_in(
                dataset,
                settings=settings.model_copy(update={"collection": source}),
                store=store,
                embedder=embedder,
                options=EvalOptions(throughput=False),
                ingest=True,
            )
        build_s = build(store, source, target, points)
        rep = evaluate_in(
            dataset,
            settings=Settings(home=BENCH_HOME, collection=target),
            store=store,
            embedder=embedder,
            options=EvalOptions(ann_vs_exact=True, throughput=False, ks=(1, 10, 100)),
        ).model_dump(mode="json")
        count = store.collection_info(target).points_count
        real = store.collection_info(source).points_count
    finally:
        store.close()
    health = rep["index_health"]
    r10 = health["recall_vs_exact"]["recall@10"]
    result = {
        "machine": machine(),
        "command": command(),
        "collection": target,
        "points": count,
        "real_chunks": real,
        "build_s": round(build_s, 1),
        "n_queries": rep["n_queries"],
        "index_health": health,
        "ndcg@10": rep["metrics"]["ndcg@10"],
        "target": {"recall@10 vs exact": 0.95},
        "met": r10 is not None and r10 >= 0.95,
    }
    path = write_results("index", result, quick=args.quick)
    print_table(
        f"Index health on {count:,} chunks ({rep['n_queries']} SciFact queries)",
        ["", "value"],
        [
            *[(k, v) for k, v in health["recall_vs_exact"].items()],
            ("HNSW search p50 / p95 ms", "{p50:.2f} / {p95:.2f}".format(**health["ann_search_ms"])),
            (
                "exact search p50 / p95 ms",
                "{p50:.2f} / {p95:.2f}".format(**health["exact_search_ms"]),
            ),
            ("recall@10 >= 0.95", verdict(result["met"])),
        ],
        caption=f"written to {path}",
    )


if __name__ == "__main__":
    main()
