"""Evaluation wall time vs BEIR, and metric computation time vs ranx and pytrec_eval.

    .venv/bin/python -m bench.bench_eval [--quick]

1. SciFact (quick: 20 test queries, their documents and 100 others) with ragsonde's
   collection already built: ``ragsonde.evaluate`` wall time (every query one at a time through
   the retriever, metrics, integrity) vs BEIR's ``EvaluateRetrieval`` with
   ``DenseRetrievalExactSearch`` on the same model, which must encode the corpus on every run
   (it has no stored index). Target ≤ 1.0 ×. nDCG@10 of both is printed beside. When the
   collection had to be built first, "from nothing" (ingest + first eval) vs BEIR is reported
   too: the like-for-like cost of a first evaluation.
2. Metric computation on 10k queries × 100 results (quick: 2k): ragsonde's ``compute_metrics``
   (ir-measures) vs ranx vs pytrec_eval called directly, same qrels and run, same metrics.
Writes ``bench/results/eval.json``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from bench._common import BENCH_HOME, SCIFACT, require_scifact, write_results


def make_slice(folder: Path, n_queries: int, n_extra: int) -> Path:
    """A BEIR folder: the first test queries, their documents, and other documents."""
    from ragsonde.testing import beir_slice

    return beir_slice(SCIFACT, folder, n_queries, n_extra)


def beir_eval(dataset: Path, model_path: str) -> tuple[float, float]:
    from beir.datasets.data_loader import GenericDataLoader
    from beir.retrieval.evaluation import EvaluateRetrieval
    from beir.retrieval.models import SentenceBERT
    from beir.retrieval.search.dense import DenseRetrievalExactSearch

    t0 = time.perf_counter()
    corpus, queries, qrels = GenericDataLoader(str(dataset)).load(split="test")
    model = DenseRetrievalExactSearch(SentenceBERT(model_path), batch_size=64)
    ev = EvaluateRetrieval(model, k_values=[1, 3, 5, 10, 100], score_function="cos_sim")
    results = ev.retrieve(corpus, queries)
    ndcg, _map, _recall, _p = ev.evaluate(
        qrels, results, [1, 3, 5, 10, 100], ignore_identical_ids=False
    )
    return time.perf_counter() - t0, ndcg["NDCG@10"]


def collection_exists(settings: object) -> bool:
    from ragsonde.store import open_store

    store = open_store(settings)  # type: ignore[arg-type]
    try:
        return settings.collection in store.list_collections()  # type: ignore[attr-defined]
    finally:
        store.close()


def metric_timing(repeats: int, n_queries: int = 10_000) -> dict[str, float]:
    import pytrec_eval
    from ranx import Qrels, Run, evaluate

    from ragsonde.evaluate import compute_metrics

    rng = random.Random(1)
    docs = [f"d{i}" for i in range(20000)]
    qrels = {f"q{i}": {d: 1 for d in rng.sample(docs, 3)} for i in range(n_queries)}
    run = {q: {d: rng.random() for d in rng.sample(docs, 100)} for q in qrels}
    for q in run:  # make some hits
        for d in list(qrels[q])[:1]:
            run[q][d] = 0.99
    names = ["ndcg@10", "recall@100", "precision@10", "mrr", "map@100", "hit_rate@10"]
    ranx_names = ["ndcg@10", "recall@100", "precision@10", "mrr", "map@100", "hit_rate@10"]
    trec_names = {"ndcg_cut.10", "recall.100", "P.10", "recip_rank", "map_cut.100", "success.10"}
    evaluate(Qrels(qrels), Run(run), ranx_names)  # numba JIT warm-up
    out: dict[str, list[float]] = {"ragsonde": [], "ranx": [], "pytrec_eval": []}
    for _ in range(repeats):
        t0 = time.perf_counter()
        compute_metrics(names, qrels, run)
        out["ragsonde"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        evaluate(Qrels(qrels), Run(run), ranx_names)
        out["ranx"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        pytrec_eval.RelevanceEvaluator(qrels, trec_names).evaluate(run)
        out["pytrec_eval"].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=None, help="BEIR comparison runs (1)")
    args = ap.parse_args()
    require_scifact()
    # Full: one BEIR run (it re-encodes all of SciFact, ~4 min); the metric timing is cheap, 3 runs.
    args.repeats = args.repeats or 1
    metric_queries = 2_000 if args.quick else 10_000

    from bench._common import evaluate_in
    from ragsonde.config import Settings
    from ragsonde.embedders.local import LocalEmbedder, resolve_model_path
    from ragsonde.evaluate import EvalOptions

    model_path = resolve_model_path("sentence-transformers/all-MiniLM-L6-v2")
    embedder = LocalEmbedder("sentence-transformers/all-MiniLM-L6-v2")
    with tempfile.TemporaryDirectory() as tmp:
        if args.quick:
            dataset = make_slice(Path(tmp) / "slice", 20, 100)
            settings = Settings(home=Path(tmp) / "home", collection="slice")
        else:
            dataset = SCIFACT
            settings = Settings(home=BENCH_HOME, collection="scifact")
        opts = EvalOptions(ks=(1, 3, 5, 10, 100), throughput=False)
        # Build the collection if missing, and time it: "from nothing" (build + eval) is the
        # like-for-like figure against BEIR, which embeds the corpus on every run.
        built = not collection_exists(settings)
        t0 = time.perf_counter()
        evaluate_in(dataset, settings=settings, embedder=embedder, options=opts, ingest=True)
        build_s = time.perf_counter() - t0 if built else None
        rs_times, bz_times = [], []
        rs_ndcg = bz_ndcg = 0.0
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            report = evaluate_in(dataset, settings=settings, embedder=embedder, options=opts)
            rs_times.append(time.perf_counter() - t0)
            rs_ndcg = report.metrics["ndcg@10"]
            secs, bz_ndcg = beir_eval(dataset, model_path)
            bz_times.append(secs)
        n_queries = report.n_queries
    metrics = metric_timing(3, metric_queries)
    rs, bz = statistics.median(rs_times), statistics.median(bz_times)
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "dataset": "scifact slice (20 queries, their docs + 100)" if args.quick else "scifact test",
        "queries": n_queries,
        "ragsonde_eval_s": rs,
        "beir_exact_eval_s": bz,
        "ratio": rs / bz,
        "ragsonde_build_and_eval_s": None if build_s is None else build_s,
        "ratio_from_nothing": None if build_s is None else build_s / bz,
        "target_ratio": 1.0,
        "target_met": rs / bz <= 1.0,
        "ndcg@10": {"ragsonde (chunks, HNSW)": rs_ndcg, "beir (truncated docs, exact)": bz_ndcg},
        "metric_computation_s": metrics,
        "metric_workload": f"{metric_queries:,} queries x 100 results, median of 3",
    }
    write_results("eval", result, quick=args.quick)
    print(
        f"{result['dataset']}: ragsonde eval {rs:.1f} s vs BEIR EvaluateRetrieval {bz:.1f} s -> "
        f"{rs / bz:.2f}x (target <= 1.0); nDCG@10 ragsonde {rs_ndcg:.4f}, BEIR {bz_ndcg:.4f}"
    )
    if build_s is not None:
        print(
            f"from nothing (ingest + eval, first run) {build_s:.1f} s vs BEIR {bz:.1f} s -> "
            f"{build_s / bz:.2f}x (BEIR embeds truncated whole docs; ragsonde embeds every chunk)"
        )
    print(
        f"metrics on {result['metric_workload']} (s): "
        + ", ".join(f"{k} {v:.2f}" for k, v in metrics.items())
    )


if __name__ == "__main__":
    main()
