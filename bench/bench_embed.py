"""The local model's backends side by side: torch, ONNX fp32, ONNX int8 (issue 17).

Each backend runs in its own process (so one's threads, caches and imports never help another),
in alternating order across rounds (torch, fp32, int8; then int8, fp32, torch; ...). Each process
measures, on SciFact:

- the model load, alone (``model_load_ms``);
- single-query encode latency, p50/p95, over real SciFact queries (after 3 warm-up queries);
- batch-of-100 throughput (queries/s, median of 3);
- ingest docs/s: ``ragsonde.ingest`` of a SciFact corpus (a slice with ``--quick``) into an
  embedded store of its own;
- nDCG@10 of ``ragsonde.evaluate`` on that collection (with ``--quick``: the first 100 test
  queries over their relevant documents plus distractors; the full run: all of SciFact).

And, from the parent, the cold start of a one-shot ``ragsonde query`` on the demo collection
(the sample robotics docs), process start to exit, wall and CPU seconds, backends alternating.

    .venv/bin/python -m bench.bench_embed [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench._common import (
    ROOT,
    SCIFACT,
    command,
    latency_summary,
    machine,
    module_command,
    print_table,
    write_results,
)

MODEL = "sentence-transformers/all-MiniLM-L6-v2"
BACKENDS = {
    "torch": f"local:{MODEL}?backend=torch",
    "onnx-fp32": f"local:{MODEL}?backend=onnx",
    "onnx-int8": f"local:{MODEL}?backend=onnx&quant=int8",
}
DEMO_COLLECTION = "ragsonde_demo"
COLD_QUERY = "how do I calibrate the lidar?"


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# -- one backend, in its own process ---------------------------------------------------------------
def child(spec: str, dataset: Path, singles: int) -> dict[str, Any]:
    from bench._common import evaluate_in
    from ragsonde.config import load_settings
    from ragsonde.embedders import get_embedder, preload
    from ragsonde.ingest import ingest

    texts = [q["text"] for q in _read_jsonl(SCIFACT / "queries.jsonl")]
    home = Path(tempfile.mkdtemp(prefix="bench-embed-"))
    settings = load_settings(embedder=spec, home=home, collection="scifact")
    emb = get_embedder(settings)
    load_ms = preload(emb)
    for t in texts[:3]:
        emb.embed_queries([t])
    single = []
    for t in texts[3 : 3 + singles]:
        t0 = time.perf_counter()
        emb.embed_queries([t])
        single.append((time.perf_counter() - t0) * 1000)
    batch = texts[200:300]
    runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        emb.embed_queries(batch)
        runs.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    report = ingest(str(dataset / "corpus.jsonl"), settings=settings, embedder=emb)
    ingest_s = time.perf_counter() - t0
    ev = evaluate_in(str(dataset), settings=settings, embedder=emb).model_dump(mode="json")
    return {
        "spec": spec,
        "backend": getattr(emb, "backend", "?"),
        "model_load_ms": load_ms,
        "single_ms": latency_summary(single),
        "single_n": len(single),
        "batch100_qps": len(batch) / statistics.median(runs),
        "ingest": {
            "documents": report.documents,
            "chunks": report.chunks,
            "seconds": ingest_s,
            "docs_per_s": report.documents / ingest_s,
        },
        "ndcg@10": ev["metrics"]["ndcg@10"],
        "eval_queries": ev["n_queries"],
        "torch_imported": "torch" in sys.modules,
    }


def run_child(name: str, dataset: Path, singles: int) -> dict[str, Any]:
    out = subprocess.run(
        module_command(
            "bench.bench_embed",
            "--child",
            name,
            "--dataset",
            str(dataset),
            "--singles",
            str(singles),
        ),
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=3600,
    )
    if out.returncode != 0:
        raise SystemExit(f"{name} failed:\n{out.stderr[-3000:]}")
    measured: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return measured


# -- cold start of a one-shot query ----------------------------------------------------------------
def demo_home(root: Path) -> Path:
    from ragsonde.config import load_settings
    from ragsonde.ingest import ingest
    from ragsonde.samples import robotics_docs

    home = root / "demo"
    ingest(str(robotics_docs()), settings=load_settings(home=home, collection=DEMO_COLLECTION))
    return home


def cold_start(spec: str, home: Path) -> dict[str, Any]:
    env = os.environ | {"RAGSONDE_EMBEDDER": spec, "RAGSONDE_HOME": str(home)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "ragsonde", "query", COLD_QUERY, "-c", DEMO_COLLECTION, "-k", "3"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"cold query with {spec} failed:\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="a SciFact slice, one round")
    ap.add_argument("--rounds", type=int, default=None, help="rounds of the three (1; full 2)")
    ap.add_argument("--cold", type=int, default=None, help="cold starts per backend (3; full 5)")
    ap.add_argument("--singles", type=int, default=None, help="single queries (50; full 200)")
    ap.add_argument("--child", choices=list(BACKENDS), help=argparse.SUPPRESS)
    ap.add_argument("--dataset", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    singles = args.singles or (50 if args.quick else 200)
    if args.child:
        print(json.dumps(child(BACKENDS[args.child], args.dataset, singles)))
        return

    from ragsonde.testing import beir_slice

    rounds = args.rounds or (1 if args.quick else 2)
    n_cold = args.cold or (3 if args.quick else 5)
    root = Path(tempfile.mkdtemp(prefix="bench-embed-"))
    # --quick: 100 test queries, their documents and 400 others (~520 documents)
    dataset = beir_slice(SCIFACT, root / "scifact-slice", 100, 400) if args.quick else SCIFACT
    names = list(BACKENDS)
    per: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            print(f"round {r + 1}: {name} ...", flush=True)
            per[name].append(run_child(name, dataset, singles))
    home = demo_home(root)
    cold: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    for i in range(n_cold):
        for name in names if i % 2 == 0 else names[::-1]:
            cold[name].append(cold_start(BACKENDS[name], home))

    def med(name: str, key: str, sub: str | None = None) -> float:
        vals = [(r[key][sub] if sub else r[key]) for r in per[name]]
        return float(statistics.median(vals))

    backends = {}
    for name in names:
        backends[name] = {
            "spec": BACKENDS[name],
            "model_load_ms": med(name, "model_load_ms"),
            "single_p50_ms": med(name, "single_ms", "p50"),
            "single_p95_ms": med(name, "single_ms", "p95"),
            "batch100_qps": med(name, "batch100_qps"),
            "ingest_docs_per_s": med(name, "ingest", "docs_per_s"),
            "ndcg@10": per[name][0]["ndcg@10"],
            "cold_start_wall_s": statistics.median(c["wall_s"] for c in cold[name]),
            "cold_start_cpu_s": statistics.median(c["cpu_s"] for c in cold[name]),
            "torch_imported": any(r["torch_imported"] for r in per[name]),
            "runs": per[name],
            "cold_runs": cold[name],
        }
    t, f, q = backends["torch"], backends["onnx-fp32"], backends["onnx-int8"]
    ratios = {
        "fp32_vs_torch_single_p50": f["single_p50_ms"] / t["single_p50_ms"],
        "fp32_ndcg_delta": abs(f["ndcg@10"] - t["ndcg@10"]),
        "int8_vs_torch_ingest": q["ingest_docs_per_s"] / t["ingest_docs_per_s"],
        "int8_ndcg_delta": q["ndcg@10"] - f["ndcg@10"],
    }
    targets = {
        "fp32_single_p50_le_0.6x_torch": ratios["fp32_vs_torch_single_p50"] <= 0.6,
        "cold_start_le_2s": f["cold_start_wall_s"] <= 2.0,
        "fp32_ndcg_within_0.001": ratios["fp32_ndcg_delta"] <= 0.001,
        "int8_ingest_ge_1.5x_torch": ratios["int8_vs_torch_ingest"] >= 1.5,
    }
    ingest0 = per["torch"][0]["ingest"]
    result = {
        "machine": machine(),
        "command": command(),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "quick": args.quick,
        "rounds": rounds,
        "cold_runs": n_cold,
        "singles": singles,
        "dataset": "SciFact slice: first 100 test queries, their relevant docs + distractors"
        if args.quick
        else "SciFact (all 5,183 docs, 300 test queries)",
        "documents": ingest0["documents"],
        "eval_queries": per["torch"][0]["eval_queries"],
        "backends": backends,
        "ratios": ratios,
        "targets_met": targets,
    }
    path = write_results("embed", result, quick=args.quick)
    print_table(
        "local model backends",
        [
            "backend",
            "load ms",
            "p50 ms",
            "p95 ms",
            "batch q/s",
            "ingest docs/s",
            "nDCG@10",
            "cold wall s",
            "cold cpu s",
        ],
        [
            [
                n,
                f"{b['model_load_ms']:.0f}",
                f"{b['single_p50_ms']:.1f}",
                f"{b['single_p95_ms']:.1f}",
                f"{b['batch100_qps']:.0f}",
                f"{b['ingest_docs_per_s']:.1f}",
                f"{b['ndcg@10']:.4f}",
                f"{b['cold_start_wall_s']:.2f}",
                f"{b['cold_start_cpu_s']:.2f}",
            ]
            for n, b in backends.items()
        ],
        caption=f"wrote {path}",
    )
    print(json.dumps({"ratios": ratios, "targets": targets}, indent=2))


if __name__ == "__main__":
    main()
