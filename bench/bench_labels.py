"""How far can generated labels be trusted? Offline-generated benchmark vs SciFact's human labels.

    .venv/bin/python bench/bench_labels.py [--quick] [--n 200] [--seed 0]

1. Ingests SciFact (``--quick``: the documents of 100 test queries plus 1,000 others) into a
   collection with dense and BM25 vectors (collection A, the default chunker), and the same corpus
   again with smaller chunks (collection B, 128 tokens) for the bias check.
2. Generates a benchmark offline from A's chunks (``ragsonde generate``: tf-idf known-item queries,
   stratified by document and section), and another from B's chunks.
3. Evaluates four systems, dense, BM25, hybrid RRF and hybrid DBSF, with SciFact's human labels and
   with the generated ones, and reports nDCG@10 from both and Kendall's tau between the four
   systems' orders (target: tau ≥ 0.67, at most one of the six pairs swapped).
4. Bias check: each generated benchmark scored on both collections, next to the human labels: if
   questions made from one pipeline's chunks favour that pipeline, the A-made benchmark rates A
   above B more than the human labels do, and the B-made one the other way round.

Writes ``bench/results/labels.json``; ``bench/report.py`` renders it (:func:`labels_section`).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
from _common import SCIFACT, machine, print_table, write_results  # noqa: E402

BENCH_HOME = ROOT / ".ragsonde-bench"
SYSTEMS = {  # name -> (mode, fusion)
    "dense": ("dense", "rrf"),
    "bm25": ("sparse", "rrf"),
    "hybrid_rrf": ("hybrid", "rrf"),
    "hybrid_dbsf": ("hybrid", "dbsf"),
}
SMALL_CHUNKS = 128
TARGET_TAU = 0.67


def ensure_collection(store, embedder, corpus: Path, name: str, chunk_size: int | None) -> float:
    """Ingest ``corpus`` (dense + BM25) into ``name``; seconds spent. Ingestion skips the chunks
    already stored unchanged, so an interrupted run resumes where it stopped."""
    from ragsonde.ingest import IngestOptions, ingest_documents, open_source

    t0 = time.perf_counter()
    rep = ingest_documents(
        open_source(str(corpus), "beir"),
        store=store,
        embedder=embedder,
        collection=name,
        options=IngestOptions(sparse=True, chunk_size=chunk_size),
    )
    if rep.embedded:
        store.build_index(name)
    return round(time.perf_counter() - t0, 1)


def score(store, embedder, dataset: Path, collection: str) -> dict[str, float]:
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int, default=200, help="Generated queries per benchmark.")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    from bench_eval import make_slice

    from ragsonde.config import Settings
    from ragsonde.embedders.local import LocalEmbedder
    from ragsonde.labels import generate
    from ragsonde.store import open_store

    started = time.perf_counter()
    prefix = "labels_q100" if args.quick else "labels_full"
    dataset = make_slice(BENCH_HOME / f"{prefix}-data", 100, 1000) if args.quick else SCIFACT
    corpus = dataset / "corpus.jsonl"
    coll_a, coll_b = f"{prefix}_a", f"{prefix}_b{SMALL_CHUNKS}"
    embedder = LocalEmbedder("sentence-transformers/all-MiniLM-L6-v2")
    store = open_store(Settings(home=BENCH_HOME))
    gen_dir = BENCH_HOME / f"{prefix}-generated"
    try:
        ingest_s = {
            coll_a: ensure_collection(store, embedder, corpus, coll_a, None),
            coll_b: ensure_collection(store, embedder, corpus, coll_b, SMALL_CHUNKS),
        }
        gen: dict[str, Any] = {}
        for coll in (coll_a, coll_b):
            out = gen_dir / f"from_{coll}_seed{args.seed}.jsonl"
            rep = generate(
                out,
                collection=coll,
                n=args.n,
                seed=args.seed,
                settings=Settings(home=BENCH_HOME),
                store=store,
            )
            gen[coll] = {"path": out, "report": rep.model_dump(mode="json")}
        t0 = time.perf_counter()
        human = {c: score(store, embedder, dataset, c) for c in (coll_a, coll_b)}
        generated = {
            src: {c: score(store, embedder, g["path"], c) for c in (coll_a, coll_b)}
            for src, g in gen.items()
        }
        eval_s = time.perf_counter() - t0
    finally:
        store.close()

    main_gen = generated[coll_a][coll_a]
    agreement = tau(human[coll_a], main_gen)
    bias = {
        f"generated_from_{src}": {
            "ndcg@10_on": {c: generated[src][c] for c in (coll_a, coll_b)},
            "a_minus_b": {
                n: round(generated[src][coll_a][n] - generated[src][coll_b][n], 4) for n in SYSTEMS
            },
            "tau_vs_human_on_a": tau(human[coll_a], generated[src][coll_a])["tau"],
        }
        for src in generated
    }
    bias["human"] = {
        "ndcg@10_on": human,
        "a_minus_b": {n: round(human[coll_a][n] - human[coll_b][n], 4) for n in SYSTEMS},
    }
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "quick": args.quick,
        "dataset": "scifact test"
        + (" (slice: 100 queries, their docs + 1,000 others)" if args.quick else ""),
        "generator": gen[coll_a]["report"]["generator"],
        "generated_queries": args.n,
        "seed": args.seed,
        "collections": {coll_a: "default chunker", coll_b: f"{SMALL_CHUNKS}-token chunks"},
        "generate": {
            c: {
                k: g["report"][k]
                for k in ("written", "documents_sampled", "sections_sampled", "seconds")
            }
            for c, g in gen.items()
        },
        "ndcg@10": {"human": human[coll_a], "generated": main_gen},
        "order": {"human": order(human[coll_a]), "generated": order(main_gen)},
        "kendall": agreement,
        "target_tau": TARGET_TAU,
        "target_met": agreement["tau"] >= TARGET_TAU,
        "bias": bias,
        "seconds": {
            "ingest": ingest_s,
            "evaluate": round(eval_s, 1),
            "total": round(time.perf_counter() - started, 1),
        },
        "machine": machine(),
    }
    path = write_results("labels", summary)
    print_table(
        "nDCG@10 on collection A: human vs generated labels",
        ["system", "human", "generated"],
        [(n, f"{human[coll_a][n]:.4f}", f"{main_gen[n]:.4f}") for n in SYSTEMS],
        caption=f"Kendall tau {agreement['tau']:+.3f} (target ≥ {TARGET_TAU}); swapped: "
        f"{', '.join(agreement['swapped_pairs']) or 'none'}",
    )
    print_table(
        "bias check: nDCG@10 on A minus on B",
        ["system", "human", *(f"gen. from {c}" for c in gen)],
        [
            (
                n,
                f"{bias['human']['a_minus_b'][n]:+.4f}",
                *(f"{bias[f'generated_from_{c}']['a_minus_b'][n]:+.4f}" for c in gen),
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
        f"Bias check: nDCG@10 on `{coll_a}` ({d['collections'][coll_a]}) minus on `{coll_b}` "
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


if __name__ == "__main__":
    main()
