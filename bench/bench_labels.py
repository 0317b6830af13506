"""How far can generated labels be trusted? Offline-generated benchmarks vs SciFact's human labels.

    .venv/bin/python -m bench.bench_labels [--quick] [--n 200] [--seed 0] [--methods a,b]

1. Collection A: SciFact with the default chunker, dense and BM25 vectors. The full run reuses
   ``bench_tune.py``'s ``scifact_hybrid`` (same home, same name: whichever script runs first builds
   it), so it ingests only collection B: the same corpus with smaller chunks (128 tokens), for the
   bias check. ``--quick``: the documents of 100 test queries plus 1,000 others, both collections.
   Ingestion is skipped for a collection that exists already.
2. For each offline method (``ragsonde generate --method``: ``sentence``, ``mixed``, ``terms``),
   generates a benchmark from A's chunks and another from B's (stratified by document and
   section).
3. Evaluates four systems, dense, BM25, hybrid RRF and hybrid DBSF, with SciFact's human labels and
   with each generated set, and reports nDCG@10 from both and Kendall's tau between the four
   systems' orders (target: tau ≥ 0.67, at most one of the six pairs swapped). The headline is
   ragsonde's default method; it was chosen on the ``--quick`` slice, so the full run's tau is the
   figure not used to choose it.
4. Bias check: each generated benchmark scored on both collections, next to the human labels: if
   questions made from one pipeline's chunks favour that pipeline, the A-made benchmark rates A
   above B more than the human labels do, and the B-made one the other way round.

Writes ``bench/results/labels.json``; ``bench/report.py`` renders it (:func:`labels_section`).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench._common import (
    BENCH_HOME,
    SCIFACT,
    SCIFACT_HYBRID,
    ensure_collection,
    machine,
    print_table,
    write_results,
)

if TYPE_CHECKING:
    from ragsonde.embedders import Embedder
    from ragsonde.store import Store

SYSTEMS = {  # name -> (mode, fusion)
    "dense": ("dense", "rrf"),
    "bm25": ("sparse", "rrf"),
    "hybrid_rrf": ("hybrid", "rrf"),
    "hybrid_dbsf": ("hybrid", "dbsf"),
}
SMALL_CHUNKS = 128
TARGET_TAU = 0.67


def score(store: Store, embedder: Embedder, dataset: Path, collection: str) -> dict[str, float]:
    """nDCG@10 of the four systems on ``collection`` with the labels of ``dataset``."""
    from ragsonde.config import Settings
    from ragsonde.evaluate import EvalOptions, evaluate

    out = {}
    for name, (mode, fusion) in SYSTEMS.items():
        s = Settings(home=BENCH_HOME, collection=collection, fusion=fusion)
        rep = evaluate(
            dataset,
            settings=s,
            store=store,
            embedder=embedder,
            options=EvalOptions(mode=mode, throughput=False, ks=(10,)),
        )
        out[name] = rep.metrics["ndcg@10"]
    return out


def tau(a: dict[str, float], b: dict[str, float]) -> dict[str, Any]:
    """Kendall's tau-b between the systems' scores under two label sets, and the swapped pairs."""
    from itertools import combinations

    from scipy.stats import kendalltau

    names = list(SYSTEMS)
    res = kendalltau([a[n] for n in names], [b[n] for n in names])
    swapped = [f"{x}/{y}" for x, y in combinations(names, 2) if (a[x] - a[y]) * (b[x] - b[y]) < 0]
    return {
        "tau": round(float(res.statistic), 4),
        "p": round(float(res.pvalue), 4),
        "swapped_pairs": swapped,
    }


def order(scores: dict[str, float]) -> str:
    return " > ".join(sorted(scores, key=lambda n: -scores[n]))


def method_result(
    method: str, gen: dict[str, Any], human: dict[str, dict[str, float]], generated: Any
) -> dict[str, Any]:
    """One offline method's figures: its labels' nDCG@10, order, tau and the bias check."""
    coll_a, coll_b = list(human)
    main_gen = generated[coll_a][coll_a]
    agreement = tau(human[coll_a], main_gen)
    bias: dict[str, Any] = {
        f"generated_from_{src}": {
            "ndcg@10_on": {c: generated[src][c] for c in (coll_a, coll_b)},
            "a_minus_b": {
                n: round(generated[src][coll_a][n] - generated[src][coll_b][n], 4) for n in SYSTEMS
            },
            "tau_vs_human_on_a": tau(human[coll_a], generated[src][coll_a])["tau"],
        }
        for src in generated
    }
    return {
        "generator": gen[coll_a]["report"]["generator"],
        "generate": {
            c: {
                k: g["report"][k]
                for k in ("written", "documents_sampled", "sections_sampled", "seconds")
            }
            for c, g in gen.items()
        },
        "ndcg@10": main_gen,
        "order": order(main_gen),
        "kendall": agreement,
        "target_met": agreement["tau"] >= TARGET_TAU,
        "bias": bias,
    }


def main() -> None:
    from ragsonde.labels.offline import DEFAULT_METHOD, OFFLINE_METHODS

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int, default=200, help="Generated queries per benchmark.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--methods",
        default=",".join(OFFLINE_METHODS),
        help=f"Offline methods to compare, comma-separated (default: all; the headline is "
        f"'{DEFAULT_METHOD}', ragsonde's default, when it is among them).",
    )
    args = ap.parse_args()
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(methods) - set(OFFLINE_METHODS))
    if unknown or not methods:
        ap.error(f"unknown method(s) {unknown}; choose from {sorted(OFFLINE_METHODS)}")
    headline = DEFAULT_METHOD if DEFAULT_METHOD in methods else methods[0]

    from bench.bench_eval import make_slice
    from ragsonde.config import Settings
    from ragsonde.embedders import get_embedder
    from ragsonde.labels import generate
    from ragsonde.store import open_store

    started = time.perf_counter()
    prefix = "labels_q100" if args.quick else "labels_full"
    dataset = make_slice(BENCH_HOME / f"{prefix}-data", 100, 1000) if args.quick else SCIFACT
    # The full run's collection A is bench_tune.py's: built once, reused by both scripts.
    coll_a = f"{prefix}_a" if args.quick else SCIFACT_HYBRID
    coll_b = f"{prefix}_b{SMALL_CHUNKS}"
    colls = (coll_a, coll_b)
    settings = Settings(home=BENCH_HOME)
    embedder = get_embedder(settings)  # the default backend (ONNX)
    store = open_store(settings)
    gen_dir = BENCH_HOME / f"{prefix}-generated"
    gens: dict[str, dict[str, Any]] = {}
    generated: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
    try:
        ingest_s = {
            coll_a: ensure_collection(settings, embedder, dataset, collection=coll_a, store=store),
            coll_b: ensure_collection(
                settings, embedder, dataset, collection=coll_b, chunk_size=SMALL_CHUNKS, store=store
            ),
        }
        t0 = time.perf_counter()
        human = {c: score(store, embedder, dataset, c) for c in colls}
        for method in methods:
            gens[method] = {}
            for coll in colls:
                out = gen_dir / f"{method}_from_{coll}_seed{args.seed}.jsonl"
                rep = generate(
                    out,
                    collection=coll,
                    n=args.n,
                    seed=args.seed,
                    method=method,
                    settings=settings,
                    store=store,
                )
                gens[method][coll] = {"path": out, "report": rep.model_dump(mode="json")}
            generated[method] = {
                src: {c: score(store, embedder, g["path"], c) for c in colls}
                for src, g in gens[method].items()
            }
        eval_s = time.perf_counter() - t0
    finally:
        store.close()

    per_method = {m: method_result(m, gens[m], human, generated[m]) for m in methods}
    top = per_method[headline]
    bias = dict(top["bias"])
    bias["human"] = {
        "ndcg@10_on": human,
        "a_minus_b": {n: round(human[coll_a][n] - human[coll_b][n], 4) for n in SYSTEMS},
    }
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "quick": args.quick,
        "dataset": "scifact test"
        + (" (slice: 100 queries, their docs + 1,000 others)" if args.quick else ""),
        # The headline: ragsonde's default offline method; every method compared is in "methods".
        "method": headline,
        "generator": top["generator"],
        "generated_queries": args.n,
        "seed": args.seed,
        "collections": {coll_a: "default chunker", coll_b: f"{SMALL_CHUNKS}-token chunks"},
        "generate": top["generate"],
        "ndcg@10": {"human": human[coll_a], "generated": top["ndcg@10"]},
        "order": {"human": order(human[coll_a]), "generated": top["order"]},
        "kendall": top["kendall"],
        "target_tau": TARGET_TAU,
        "target_met": top["target_met"],
        "bias": bias,
        "methods": per_method,
        "seconds": {
            "ingest": ingest_s,
            "evaluate": round(eval_s, 1),
            "total": round(time.perf_counter() - started, 1),
        },
        "machine": machine(),
    }
    path = write_results("labels", summary, quick=args.quick)
    print_table(
        "nDCG@10 on collection A: human labels vs each offline method's generated labels",
        ["system", "human", *methods],
        [
            (n, f"{human[coll_a][n]:.4f}", *(f"{per_method[m]['ndcg@10'][n]:.4f}" for m in methods))
            for n in SYSTEMS
        ],
        caption=f"human order: {order(human[coll_a])}",
    )
    print_table(
        f"Kendall tau vs human labels (target ≥ {TARGET_TAU})",
        ["method", "tau", "swapped pairs", "order"],
        [
            (
                m,
                f"{r['kendall']['tau']:+.3f}",
                ", ".join(r["kendall"]["swapped_pairs"]) or "none",
                r["order"],
            )
            for m, r in per_method.items()
        ],
    )
    print_table(
        f"bias check ({headline}): nDCG@10 on A minus on B",
        ["system", "human", *(f"gen. from {c}" for c in colls)],
        [
            (
                n,
                f"{bias['human']['a_minus_b'][n]:+.4f}",
                *(f"{bias[f'generated_from_{c}']['a_minus_b'][n]:+.4f}" for c in colls),
            )
            for n in SYSTEMS
        ],
    )
    print(f"wrote {path}")


def labels_section(d: dict[str, Any]) -> list[str]:
    """The RESULTS.md section for ``bench/results/labels.json`` (called by ``report.py``)."""
    (coll_a, coll_b) = list(d["collections"])
    k = d["kendall"]
    out = [
        "## Generated labels vs human labels on SciFact (`bench/bench_labels.py`)",
        "",
        f"{d['dataset']}, run {d['date']}. {d['generated_queries']} queries generated offline "
        f"(`{d['generator']}`, seed {d['seed']}) from the chunks of `{coll_a}`; the same four "
        "systems scored with SciFact's human labels and with the generated ones.",
        "",
        "| system | nDCG@10, human labels | nDCG@10, generated labels |",
        "|---|---|---|",
    ]
    for n in d["ndcg@10"]["human"]:
        out.append(f"| {n} | {d['ndcg@10']['human'][n]:.4f} | {d['ndcg@10']['generated'][n]:.4f} |")
    met = "**met**" if d["target_met"] else "**missed**"
    out += [
        "",
        f"Order, human: {d['order']['human']}; generated: {d['order']['generated']}. Kendall's "
        f"tau = {k['tau']:+.3f} (p = {k['p']:.3g}; target ≥ {d['target_tau']}: {met}); swapped "
        f"pairs: {', '.join(k['swapped_pairs']) or 'none'}.",
        "",
    ]
    out += _methods_table(d)
    out += [
        f"Bias check (`{d['generator']}`): nDCG@10 on `{coll_a}` ({d['collections'][coll_a]}) "
        f"minus on `{coll_b}` "
        f"({d['collections'][coll_b]}), per label set. A benchmark made from one collection's "
        "chunks that favours that collection shows a larger A − B than the human labels do.",
        "",
        "| system | human | "
        + " | ".join(f"generated from `{c}`" for c in (coll_a, coll_b))
        + " |",
        "|---|---|---|---|",
    ]
    b = d["bias"]
    for n in d["ndcg@10"]["human"]:
        cells = [f"{b[f'generated_from_{c}']['a_minus_b'][n]:+.4f}" for c in (coll_a, coll_b)]
        out.append(f"| {n} | {b['human']['a_minus_b'][n]:+.4f} | " + " | ".join(cells) + " |")
    out.append("")
    return out


def _methods_table(d: dict[str, Any]) -> list[str]:
    """Every offline method compared: its tau, swapped pairs and nDCG@10 per system."""
    methods = d.get("methods")
    if not methods:  # results written before methods were compared
        return []
    systems = list(d["ndcg@10"]["human"])
    out = [
        f"Each offline method (`ragsonde generate --method`; the default is `{d['method']}`), "
        "nDCG@10 per system under its generated labels:",
        "",
        "| method | tau | swapped pairs | " + " | ".join(systems) + " |",
        "|---|---|---|" + "---|" * len(systems),
        "| human labels | | | "
        + " | ".join(f"{d['ndcg@10']['human'][n]:.4f}" for n in systems)
        + " |",
    ]
    for m, r in methods.items():
        cells = " | ".join(f"{r['ndcg@10'][n]:.4f}" for n in systems)
        swapped = ", ".join(r["kendall"]["swapped_pairs"]) or "none"
        out.append(f"| `{m}` | {r['kendall']['tau']:+.3f} | {swapped} | {cells} |")
    out.append("")
    return out


if __name__ == "__main__":
    main()
