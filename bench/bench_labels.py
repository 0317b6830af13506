"""Do generated labels rank systems as human labels do? Eight systems on SciFact test.

    .venv/bin/python -m bench.bench_labels [--quick] [--n 200] [--seed 0] [--d2q 40]
        [--judge-queries 15] [--llm local:gemma3-270m] [--boot 1000]

1. Collection A: SciFact with the default chunker, dense and BM25 vectors (``bench_tune.py``'s
   ``scifact_hybrid``: whichever script runs first builds it). Three copies of it are built once
   through the store interface (tune's :func:`build_tuned_copy`): int8 scalar quantization, 1-bit
   binary quantization, and BM25 re-encoded with tuned k1/b (0.9/0.4, title counted twice, the
   best BM25 build of ``bench_tune.py``). ``--quick``: the documents of 100 test queries plus
   1,000 others.
2. Eight systems: dense fp32, dense int8, dense binary without rescoring (a degraded index),
   BM25 default and tuned, hybrid RRF, DBSF and linear fusion.
3. Label sets: SciFact's human labels; each offline method's generated benchmark (``ragsonde
   generate --method``), ICT evaluated on its copy of the collection (and that copy's three
   variants) with its query sentences removed; doc2query by the local model (``--llm``, on a
   sample of ``--d2q`` chunks: a CPU model is slow); and the local model as judge of the pooled
   hits (dense and BM25 top-3) of ``--judge-queries`` human queries, its labels alone.
4. For every label set: nDCG@10 of each system, Kendall's tau between the systems' order under
   it and under the human labels, with a bootstrap 95% interval over queries (human and generated
   queries resampled independently; paired for the judge, whose queries are the human ones), top-1
   agreement (the same best system), and where BM25 lands. Each benchmark's lexical leakage
   (:mod:`ragsonde.labels.leakage`) beside the human benchmark's. And the local model's judge
   agreement with the human labels: Cohen's kappa on the pooled hits.

Writes ``bench/results/labels.json``; ``bench/report.py`` renders it
(:func:`bench._sections_labels.labels_section`).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from bench._common import (
    BENCH_HOME,
    SCIFACT,
    SCIFACT_HYBRID,
    machine,
    print_table,
    require_scifact,
    write_results,
)

#: name -> (index variant, mode, search settings)
SYSTEMS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "dense": ("base", "dense", {}),
    "dense_int8": ("int8", "dense", {}),
    "dense_binary_norescore": ("binary", "dense", {"quantization_rescore": False}),
    "bm25": ("base", "sparse", {}),
    "bm25_tuned": ("bm25t", "sparse", {}),
    "hybrid_rrf": ("base", "hybrid", {"fusion": "rrf"}),
    "hybrid_dbsf": ("base", "hybrid", {"fusion": "dbsf"}),
    "hybrid_linear": ("base", "hybrid", {"fusion": "linear", "fusion_weights": (0.7, 0.3)}),
}
BM25_SYSTEMS = ("bm25", "bm25_tuned")
TARGET_TAU = 0.67


def _variant_specs() -> dict[str, Any]:
    from ragsonde.models.index import Bm25Params, Quantization
    from ragsonde.tune.variants import VariantSpec

    return {
        "int8": VariantSpec(quantization=Quantization(kind="scalar")),
        "binary": VariantSpec(quantization=Quantization(kind="binary", bits=1)),
        "bm25t": VariantSpec(bm25=Bm25Params(k1=0.9, b=0.4, title_weight=2)),
    }


def resume(ws: Any, dataset: Path, base: str) -> None:
    """Ingest ``dataset``'s corpus into ``base`` (dense + BM25), or finish an ingest that was
    stopped: ingest skips the chunks already there, so a complete collection costs a re-read."""
    from ragsonde.ingest import IngestOptions, ingest

    if base == SCIFACT_HYBRID and base in ws.store.list_collections():
        return  # bench_tune.py's, complete when there
    ingest(str(dataset), fmt="beir", collection=base, workspace=ws,
           options=IngestOptions(sparse=True))  # fmt: skip


def ensure_variants(store: Any, base: str) -> dict[str, str]:
    """Variant name -> collection: ``base`` itself and its three copies (built once)."""
    from ragsonde.ingest.pipeline import bm25_reencoder
    from ragsonde.tune.variants import build_tuned_copy

    out = {"base": base}
    have = set(store.list_collections())
    for name, spec in _variant_specs().items():
        target = f"{base}__{name}"
        if target not in have:
            reencode = bm25_reencoder(spec.bm25) if spec.bm25 is not None else None
            build_tuned_copy(store, base, target, spec, reencode=reencode)
        out[name] = target
    return out


#: System -> the effective search parameters its evaluations reported (``EvalReport.search``).
SEARCH_USED: dict[str, dict[str, Any]] = {}


def score(ws: Any, dataset: Path, variants: dict[str, str]) -> dict[str, dict[str, float]]:
    """System -> query id -> nDCG@10 under the labels of ``dataset``."""
    from bench._common import evaluate_in
    from ragsonde.config import Settings
    from ragsonde.evaluate import EvalOptions

    out: dict[str, dict[str, float]] = {}
    for name, (variant, mode, knobs) in SYSTEMS.items():
        s = Settings(home=BENCH_HOME, collection=variants[variant], **knobs)
        rep = evaluate_in(
            dataset,
            settings=s,
            store=ws.store,
            embedder=ws.embedder,
            options=EvalOptions(mode=mode, throughput=False, ks=(10,)),
        )
        dumped = rep.model_dump(mode="json")
        SEARCH_USED[name] = {"collection": variants[variant], **dumped["search"]}
        pq = dumped["per_query"]
        out[name] = {q: float(v["metrics"]["ndcg@10"]) for q, v in pq.items()}
    return out


def means(pq: dict[str, dict[str, float]]) -> dict[str, float]:
    return {s: round(sum(v.values()) / len(v), 4) for s, v in pq.items()}


def agreement(
    human: dict[str, dict[str, float]],
    gen: dict[str, dict[str, float]],
    *,
    boot: int,
    seed: int,
    paired: bool = False,
) -> dict[str, Any]:
    """Kendall's tau-b and top-1 agreement of the systems' orders, with a bootstrap over queries."""
    import numpy as np
    from scipy.stats import kendalltau

    names = list(SYSTEMS)
    hq = sorted(next(iter(human.values())))
    gq = sorted(next(iter(gen.values())))
    if paired:
        hq = gq = sorted(set(hq) & set(gq))
    h = np.array([[human[s][q] for q in hq] for s in names])
    g = np.array([[gen[s][q] for q in gq] for s in names])

    def stats(hm: np.ndarray, gm: np.ndarray) -> tuple[float, bool]:
        t = float(kendalltau(hm, gm).statistic)
        return (0.0 if np.isnan(t) else t), int(np.argmax(hm)) == int(np.argmax(gm))

    tau, top1 = stats(h.mean(1), g.mean(1))
    rng = np.random.default_rng(seed)
    taus, tops = [], []
    for _ in range(boot):
        hi = rng.integers(len(hq), size=len(hq))
        gi = hi if paired else rng.integers(len(gq), size=len(gq))
        t, t1 = stats(h[:, hi].mean(1), g[:, gi].mean(1))
        taus.append(t)
        tops.append(t1)
    gm = g.mean(1)
    order = [names[i] for i in np.argsort(-gm, kind="stable")]
    return {
        "tau": round(tau, 4),
        "tau_ci95": [
            round(float(np.percentile(taus, 2.5)), 4),
            round(float(np.percentile(taus, 97.5)), 4),
        ],
        "top1_agrees": top1,
        "top1_agreement_bootstrap": round(float(np.mean(tops)), 4),
        "queries": len(gq),
        "order": order,
        "bm25_first": order[0] in BM25_SYSTEMS,
        "bm25_rank": 1 + min(order.index(b) for b in BM25_SYSTEMS),
    }


def write_benchmark(path: Path, entries: list[Any]) -> Path:
    from ragsonde.labels import write_entries

    write_entries(path, [e for e in entries if e.relevant])
    return path


def main() -> None:
    from ragsonde.labels.offline import DEFAULT_METHOD, OFFLINE_METHODS

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--n", type=int, default=200, help="Generated queries per offline method.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", default=",".join(OFFLINE_METHODS))
    ap.add_argument("--llm", default="local:gemma3-270m", help="'' to skip the LLM label sets.")
    ap.add_argument("--d2q", type=int, default=40, help="doc2query: chunks sampled.")
    ap.add_argument("--judge-queries", type=int, default=15, help="Human queries judged.")
    ap.add_argument("--boot", type=int, default=1000, help="Bootstrap resamples.")
    args = ap.parse_args()
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(methods) - set(OFFLINE_METHODS))
    if unknown or not methods:
        ap.error(f"unknown method(s) {unknown}; choose from {sorted(OFFLINE_METHODS)}")
    require_scifact()

    from bench.bench_eval import make_slice
    from ragsonde.config import Settings
    from ragsonde.labels import GenerateOptions, generate, read_entries
    from ragsonde.labels.generate import measure_leakage
    from ragsonde.workspace import Workspace

    started = time.perf_counter()
    prefix = "labels_q100" if args.quick else "labels_full"
    dataset = make_slice(BENCH_HOME / f"{prefix}-data", 100, 1000) if args.quick else SCIFACT
    base = f"{prefix}_a" if args.quick else SCIFACT_HYBRID
    gen_dir = BENCH_HOME / f"{prefix}-generated"
    gen_dir.mkdir(parents=True, exist_ok=True)
    sets: dict[str, dict[str, Any]] = {}
    seconds: dict[str, float] = {}
    with Workspace(Settings(home=BENCH_HOME, collection=base)) as ws:
        t0 = time.perf_counter()
        resume(ws, dataset, base)
        variants = ensure_variants(ws.store, base)
        seconds["collections"] = round(time.perf_counter() - t0, 1)
        t0 = time.perf_counter()
        human = score(ws, dataset, variants)
        human_entries = read_entries(dataset)
        human_leak = measure_leakage(ws, human_entries, base)
        seconds["human"] = round(time.perf_counter() - t0, 1)
        for method in methods:
            t0 = time.perf_counter()
            out = gen_dir / f"{method}_seed{args.seed}.jsonl"
            ict_name = f"{base}-ict-s{args.seed}"
            if method == "ict":
                for name in [ict_name, *(f"{ict_name}__{v}" for v in _variant_specs())]:
                    if name in ws.store.list_collections():
                        ws.store.delete_collection(name)
            rep = generate(
                out,
                collection=base,
                workspace=ws,
                options=GenerateOptions(
                    n=args.n, seed=args.seed, method=method, ict_collection=ict_name
                ),
            )
            on = ensure_variants(ws.store, rep.evaluate_on) if rep.evaluate_on else variants
            sets[f"offline:{method}"] = {
                "kind": "offline",
                "report": rep.model_dump(mode="json", exclude={"usage", "judged"}),
                "pq": score(ws, out, on),
            }
            seconds[method] = round(time.perf_counter() - t0, 1)
        if args.llm:
            sets.update(llm_sets(ws, args, base, variants, human_entries, gen_dir, seconds))
    results = {}
    for name, s in sets.items():
        if not s["pq"]:  # e.g. a judge that found nothing relevant: no order to compare
            continue
        paired = s["kind"] == "judge"
        results[name] = {
            "kind": s["kind"],
            "ndcg@10": means(s["pq"]),
            "agreement": agreement(human, s["pq"], boot=args.boot, seed=args.seed, paired=paired),
            **{k: v for k, v in s.items() if k not in ("pq", "kind")},
        }
    human_means = means(human)
    hq = sorted(SYSTEMS, key=lambda n: -human_means[n])
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "quick": args.quick,
        "dataset": "scifact test"
        + (" (slice: 100 queries, their docs + 1,000 others)" if args.quick else ""),
        "collection": base,
        "variants": variants,
        "systems": {
            n: {"variant": v, "mode": m, "settings": k} for n, (v, m, k) in SYSTEMS.items()
        },
        "generated_queries": args.n,
        "seed": args.seed,
        "boot": args.boot,
        "human": {
            "ndcg@10": human_means,
            "order": hq,
            "queries": len(next(iter(human.values()))),
            "leakage": human_leak.model_dump(),
        },
        "label_sets": results,
        "default_method": DEFAULT_METHOD,
        "target_tau": TARGET_TAU,
        "seconds": {**seconds, "total": round(time.perf_counter() - started, 1)},
        "command": " ".join(["python -m bench.bench_labels", *sys.argv[1:]]),
        "machine": machine(),
    }
    finish(summary)
    best = summary["best_offline"]
    path = write_results("labels", summary, quick=args.quick)
    print_table(
        "nDCG@10 per system: human labels vs each label set",
        ["system", "human", *results],
        [
            (s, f"{human_means[s]:.3f}", *(f"{r['ndcg@10'][s]:.3f}" for r in results.values()))
            for s in SYSTEMS
        ],
    )
    print_table(
        f"agreement with the human order ({' > '.join(hq)})",
        ["label set", "queries", "tau", "95% CI", "top-1", "BM25 rank", "overlap", "BM25 top-1"],
        [_row(k, r) for k, r in results.items()],
        caption=f"human leakage: overlap {human_leak.term_overlap:.2f}, BM25 top-1 "
        f"{human_leak.bm25_top1:.2f}; best offline method: {best}",
    )
    print(f"wrote {path}")


def finish(summary: dict[str, Any]) -> None:
    """The best offline method and whether the default meets the target, from the label sets.

    Best: highest tau; at equal tau, the one that names the human labels' best system, then the
    one that does not put BM25 first (the failure issue 27 is about), then the higher lower bound
    of the interval."""
    offline = {k: v for k, v in summary["label_sets"].items() if v["kind"] == "offline"}

    def key(k: str) -> tuple[float, bool, bool, float]:
        a = offline[k]["agreement"]
        return (a["tau"], a["top1_agrees"], not a["bm25_first"], a["tau_ci95"][0])

    summary["best_offline"] = max(offline, key=key)
    top = offline.get(f"offline:{summary['default_method']}")
    summary["target_met"] = (
        None
        if top is None
        else top["agreement"]["tau"] >= TARGET_TAU and not top["agreement"]["bm25_first"]
    )


def _row(name: str, r: dict[str, Any]) -> tuple[str, ...]:
    a = r["agreement"]
    lk = (r.get("report") or {}).get("leakage") or {}
    return (
        name,
        str(a["queries"]),
        f"{a['tau']:+.3f}",
        f"[{a['tau_ci95'][0]:+.2f}, {a['tau_ci95'][1]:+.2f}]",
        "yes" if a["top1_agrees"] else "no",
        str(a["bm25_rank"]),
        f"{lk['term_overlap']:.2f}" if lk else "",
        f"{lk['bm25_top1']:.2f}" if lk.get("bm25_top1") is not None else "",
    )


def llm_sets(
    ws: Any,
    args: Any,
    base: str,
    variants: dict[str, str],
    human_entries: list[Any],
    gen_dir: Path,
    seconds: dict[str, float],
) -> dict[str, dict[str, Any]]:
    """doc2query by the local model, and its judgements of pooled hits of human queries."""
    import random

    from ragsonde.labels import GenerateOptions, JudgeOptions, generate, read_entries, write_entries
    from ragsonde.labels.chat import ChatClient
    from ragsonde.labels.judge import judge

    out: dict[str, dict[str, Any]] = {}
    client = ChatClient.from_settings(args.llm, ws.settings)
    model = client.model_file.model_dump(mode="json") if client.model_file else None
    try:
        t0 = time.perf_counter()
        d2q = gen_dir / f"d2q_{client.model}_seed{args.seed}.jsonl"
        rep = generate(
            d2q,
            collection=base,
            workspace=ws,
            client=client,
            options=GenerateOptions(n=args.d2q, seed=args.seed, llm=args.llm, judge=False),
        )
        out[f"doc2query:{client.name}"] = {
            "kind": "doc2query",
            "report": rep.model_dump(mode="json", exclude={"judged"}),
            "pq": score(ws, d2q, variants),
            "examples": [e.query for e in read_entries(d2q)[:5]],
            "model": model,
        }
        seconds["doc2query"] = round(time.perf_counter() - t0, 1)
        t0 = time.perf_counter()
        picked = random.Random(args.seed).sample(human_entries, args.judge_queries)
        sample = gen_dir / f"judge_sample_seed{args.seed}.jsonl"
        write_entries(sample, picked)
        judged_path = gen_dir / f"judged_{client.model}_seed{args.seed}.jsonl"
        opts = JudgeOptions(llm=args.llm, depth=3, modes=["dense", "sparse"], agreement=True,
                            use=("llm",))  # fmt: skip
        jrep = judge(
            sample, judged_path, options=opts, workspace=ws, collection=base, client=client
        )
        labelled = write_benchmark(gen_dir / f"judge_labels_seed{args.seed}.jsonl",
                                   read_entries(judged_path))  # fmt: skip
        out[f"judge:{client.name}"] = {
            "kind": "judge",
            "judge": jrep.model_dump(mode="json"),
            "pq": score(ws, labelled, variants) if labelled.stat().st_size else {},
            "model": model,
        }
        seconds["judge"] = round(time.perf_counter() - t0, 1)
    finally:
        client.close()
    return out


if __name__ == "__main__":
    main()
