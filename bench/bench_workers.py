"""What running trec_eval in a worker process costs the server's eval jobs.

    .venv/bin/python -m bench.bench_workers [--quick]

The server's eval jobs compute their metrics in a worker process (``ragsonde.server.workers``),
so a crash in trec_eval ends the job, not the server. This measures, on N queries x 100 results
(10k; quick 2k; the same synthetic qrels and run as bench_eval), ``compute_metrics`` in this
process vs through the worker (warm: the process already started), the worker's first call
(spawning a fresh interpreter, importing ir-measures), and the time to replace a worker that
died (a real segfault in trec_eval, then the next call). Prints a table and writes
``bench/results/workers.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import time
from collections.abc import Callable

from bench._common import command, machine, print_table, write_results

NAMES = ["ndcg@10", "recall@100", "precision@10", "mrr", "map@100", "hit_rate@10"]


def synthetic(n_queries: int) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(1)
    docs = [f"d{i}" for i in range(20000)]
    qrels = {f"q{i}": {d: 1 for d in rng.sample(docs, 3)} for i in range(n_queries)}
    run = {q: {d: rng.random() for d in rng.sample(docs, 100)} for q in qrels}
    for q in run:
        run[q][next(iter(qrels[q]))] = 0.99
    return qrels, run


def timed(fn: Callable[[], object], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="2k queries, to bench/results/quick/")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()

    from ragsonde.errors import QueryValidationError
    from ragsonde.evaluate.metrics import compute_metrics, native_runner, native_scores
    from ragsonde.server.workers import WorkerPool

    n = 2000 if args.quick else 10_000
    qrels, run = synthetic(n)
    compute_metrics(NAMES, qrels, run)  # imports and warm-up, not counted
    local = timed(lambda: compute_metrics(NAMES, qrels, run), args.repeats)
    pool = WorkerPool()
    try:
        t0 = time.perf_counter()
        pool.run(native_scores, [(["ndcg@10"], {"q": {"a": 1}}, {"q": {"a": 1.0}})])
        cold = time.perf_counter() - t0

        def isolated() -> None:
            with native_runner(lambda passes: pool.run(native_scores, passes)):
                same = compute_metrics(NAMES, qrels, run)
            assert same == expected

        expected = compute_metrics(NAMES, qrels, run)
        warm = timed(isolated, args.repeats)
        t0 = time.perf_counter()
        with contextlib.suppress(QueryValidationError):  # a real segfault, in the worker
            pool.run(native_scores, [(["ndcg@10"], {"\udc80": {"a": 1}}, {"\udc80": {"a": 1.0}})])
        crash = time.perf_counter() - t0
        t0 = time.perf_counter()
        pool.run(native_scores, [(["ndcg@10"], {"q": {"a": 1}}, {"q": {"a": 1.0}})])
        replace = time.perf_counter() - t0
    finally:
        pool.close()
    med_local, med_warm = statistics.median(local), statistics.median(warm)
    result = {
        "command": command(),
        "machine": machine(),
        "quick": args.quick,
        "queries": n,
        "results_per_query": 100,
        "metrics": NAMES,
        "in_process_s": round(med_local, 3),
        "worker_warm_s": round(med_warm, 3),
        "overhead_x": round(med_warm / med_local, 2),
        "worker_first_call_s": round(cold, 3),
        "crash_detected_s": round(crash, 3),
        "replacement_first_call_s": round(replace, 3),
        "crashes": pool.crashes,
    }
    print_table(
        f"compute_metrics, {n} queries x 100 results, median of {args.repeats}",
        ["in process s", "worker s", "x", "worker start s", "crash seen s", "replaced s"],
        [
            (
                result["in_process_s"],
                result["worker_warm_s"],
                result["overhead_x"],
                result["worker_first_call_s"],
                result["crash_detected_s"],
                result["replacement_first_call_s"],
            )
        ],
    )
    print(f"wrote {write_results('workers', result, quick=args.quick)}")


if __name__ == "__main__":
    main()
