"""Dense vs BM25 vs hybrid on SciFact, with the significance test between them.

    .venv/bin/python -m bench.bench_modes [--quick]

Builds (once, under ``.ragsonde-bench/``) the dense SciFact collection, and a second one that
also holds BM25 sparse vectors (Qdrant's own BM25: IDF modifier in the collection; the dense
vectors are copied from the first, not re-embedded). Evaluates ``mode=dense``, ``sparse`` and
``hybrid`` (RRF and DBSF, fused inside Qdrant) on the 300 test queries, saves each report to
``bench/results/scifact_<mode>.json`` and compares dense vs hybrid and sparse vs hybrid with
``ragsonde.evaluate.compare``. Targets (issue 6): sparse nDCG@10 ≥ 0.66, hybrid ≥ 0.70.
``--quick``: a SciFact slice (20 queries, their documents and 100 others). Writes
``bench/results/modes.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench._common import BENCH_HOME, SCIFACT, require_scifact, results_dir, write_results

if TYPE_CHECKING:
    from ragsonde.embedders import Embedder
    from ragsonde.models.store import Store

#: The quick slice's collection (named for its size: a changed slice gets a new collection).
QUICK_COLLECTION = "scifact_q20"


def build_hybrid(store: Store, embedder: Embedder, dense: str, hybrid: str) -> None:
    """Copy ``dense`` into ``hybrid`` adding BM25 vectors (the text embedded is the stored one)."""
    from ragsonde.embedders.sparse import SPARSE_VECTOR_NAME, Bm25Encoder
    from ragsonde.errors import CollectionNotFoundError
    from ragsonde.ingest import INDEXED_FIELDS
    from ragsonde.models.points import PointRecord

    try:
        if store.collection_info(hybrid).points_count == store.collection_info(dense).points_count:
            return
        store.delete_collection(hybrid)
    except CollectionNotFoundError:
        pass
    store.create_collection(
        hybrid,
        embedder.dimension,
        indexed_fields=INDEXED_FIELDS,
        sparse_vector_name=SPARSE_VECTOR_NAME,
    )
    bm25 = Bm25Encoder()
    for batch in store.scroll(dense, batch_size=512, with_vectors=True):
        sparse = bm25.embed_documents([p.payload["text"] for p in batch])
        points = []
        for p, s in zip(batch, sparse, strict=True):
            payload = dict(p.payload)
            key = f"{embedder.name}\x1fTrue\x1f{payload['text']}"  # as `ingest --sparse` hashes
            payload["embed_hash"] = hashlib.sha256(key.encode()).hexdigest()
            points.append(PointRecord(p.id, p.vector, payload, s))
        store.upsert(hybrid, points)
    store.build_index(hybrid)


def quick_dataset() -> Path:
    """A SciFact slice for ``--quick``: 20 test queries, their documents and 100 others."""
    from bench.bench_eval import make_slice

    return make_slice(BENCH_HOME / f"{QUICK_COLLECTION}-data", 20, 100)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    require_scifact()

    from bench._common import evaluate_in
    from ragsonde.config import Settings
    from ragsonde.embedders.local import LocalEmbedder
    from ragsonde.evaluate import EvalOptions
    from ragsonde.evaluate.compare import compare_reports
    from ragsonde.store import open_store

    embedder = LocalEmbedder("sentence-transformers/all-MiniLM-L6-v2")
    dataset = quick_dataset() if args.quick else SCIFACT
    dense = QUICK_COLLECTION if args.quick else "scifact"
    hybrid = f"{dense}_hybrid"
    settings = Settings(home=BENCH_HOME, collection=dense)
    store = open_store(settings)
    try:
        if dense not in store.list_collections():
            evaluate_in(
                dataset,
                settings=settings,
                store=store,
                embedder=embedder,
                options=EvalOptions(throughput=False),
                ingest=True,
            )
        t0 = time.perf_counter()
        build_hybrid(store, embedder, dense, hybrid)
        build_s = time.perf_counter() - t0
        reports = {}
        results = results_dir(args.quick)
        results.mkdir(parents=True, exist_ok=True)
        runs = {
            "dense": (dense, "dense", "rrf"),
            "sparse": (hybrid, "sparse", "rrf"),
            "hybrid_rrf": (hybrid, "hybrid", "rrf"),
            "hybrid_dbsf": (hybrid, "hybrid", "dbsf"),
        }
        for name, (coll, mode, fusion) in runs.items():
            s = Settings(home=BENCH_HOME, collection=coll, search={"fusion": fusion})
            rep = evaluate_in(
                dataset,
                settings=s,
                store=store,
                embedder=embedder,
                options=EvalOptions(mode=mode, throughput=False, ks=(1, 10, 100)),
            )
            doc = rep.model_dump(mode="json")
            reports[name] = rep
            (results / f"{dense}_{name}.json").write_text(json.dumps(doc))
    finally:
        store.close()
    best_hybrid = max(("hybrid_rrf", "hybrid_dbsf"), key=lambda n: reports[n].metrics["ndcg@10"])
    comparisons = {
        f"dense_vs_{best_hybrid}": compare_reports(
            reports["dense"], reports[best_hybrid], ["ndcg@10", "recall@100"]
        ).model_dump(mode="json"),
        f"sparse_vs_{best_hybrid}": compare_reports(
            reports["sparse"], reports[best_hybrid], ["ndcg@10", "recall@100"]
        ).model_dump(mode="json"),
    }
    summary: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "dataset": "scifact test"
        + (" (quick slice: 20 queries, their docs + 100)" if args.quick else ""),
        "hybrid_collection_build_s": build_s,
        "modes": {
            n: {
                "ndcg@10": r["metrics"]["ndcg@10"],
                "recall@100": r["metrics"]["recall@100"],
                "latency_total_ms_p50": r["latency"]["total_ms"]["p50"],
                "latency_search_ms_p50": r["latency"]["search_ms"]["p50"],
            }
            for n, r in ((n, rep.model_dump(mode="json")) for n, rep in reports.items())
        },
        "targets": {"sparse ndcg@10": 0.66, "hybrid ndcg@10": 0.70},
        "comparisons": {k: {m["metric"]: m for m in v["metrics"]} for k, v in comparisons.items()},
    }
    summary["targets_met"] = {
        "sparse": summary["modes"]["sparse"]["ndcg@10"] >= 0.66,
        "hybrid": summary["modes"][best_hybrid]["ndcg@10"] >= 0.70,
    }
    write_results("modes", summary, quick=args.quick)
    for n, m in summary["modes"].items():
        print(
            f"{n:12s} nDCG@10 {m['ndcg@10']:.4f}  recall@100 {m['recall@100']:.4f}  total p50 "
            f"{m['latency_total_ms_p50']:.1f} ms"
        )
    for k, v in summary["comparisons"].items():
        nd = v["ndcg@10"]
        print(
            f"{k}: delta nDCG@10 {nd.get('delta'):+.4f}, p(t) {nd.get('p_ttest')}, p(perm) "
            f"{nd.get('p_permutation')}"
        )


if __name__ == "__main__":
    main()
