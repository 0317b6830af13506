"""``ragsonde tune`` on SciFact: how cheap can retrieval get without getting worse?

    .venv/bin/python -m bench.bench_tune [--quick] [--folds 5]

Ingests (once, under ``.ragsonde-bench/``, with BM25 vectors) the SciFact corpus, then runs the
default tune grid on the 300 test queries: every quantization, HNSW and fusion setting on
temporary copies of the collection. Targets (issue 16):

- a dense configuration whose vector memory is at most 0.25x float32 and whose nDCG@10 is within
  0.005 of unquantized exact search (same chunk aggregation, best chunk per document);
- hybrid nDCG@10 of at least 0.745 on held-out folds, the retrieval knobs (fusion, prefetch,
  chunk aggregation) chosen by cross-validation on the other folds;
- the default sweep takes at most 10 minutes.

``--quick``: a SciFact slice (40 test queries, their documents and 300 others); ``--slice Q,E``
another slice. Writes ``bench/results/tune.json`` (``tune_q<Q>.json`` for a slice) and the HTML
report beside it.
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
    print_table,
    results_dir,
    verdict,
    write_results,
)

if TYPE_CHECKING:
    from ragsonde.tune import TuneReport

FULL_COLLECTION = SCIFACT_HYBRID  # shared with bench_labels.py (collection A of its full run)
MEMORY_RATIO = 0.25
NDCG_SLACK = 0.005
HYBRID_TARGET = 0.745
SWEEP_S_TARGET = 600.0


def slice_dataset(queries: int, extra: int) -> Path:
    """A SciFact slice: the first ``queries`` test queries, their documents, ``extra`` others."""
    from bench.bench_eval import make_slice

    return make_slice(BENCH_HOME / f"scifact_q{queries}-data", queries, extra)


def write_plots(report: TuneReport, stem: Path) -> None:
    """The report's plots as SVG files beside it (README's "Tune it" shows them)."""
    from ragsonde.tune.html import report_plots

    for key, svg in report_plots(report).items():
        # a standalone file: white ground and a font, which the HTML page otherwise gives
        svg = svg.replace(">", '><rect width="100%" height="100%" fill="white"/>', 1)
        svg = svg.replace("<svg ", '<svg font-family="sans-serif" font-size="12" ', 1)
        stem.with_name(f"{stem.name}-{key}.svg").write_text(svg, encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument(
        "--slice",
        metavar="Q,E",
        help="a SciFact slice: Q test queries, their documents and E others (--quick: 40,300)",
    )
    args = ap.parse_args()
    cut = "40,300" if args.quick else args.slice

    from ragsonde.config import Settings
    from ragsonde.embedders import get_embedder
    from ragsonde.tune import TuneOptions, tune
    from ragsonde.tune.html import write_html

    if cut:
        n_queries, n_extra = (int(x) for x in cut.split(","))
        dataset = slice_dataset(n_queries, n_extra)
        collection = f"scifact_q{n_queries}_hybrid"
    else:
        dataset, collection = SCIFACT, FULL_COLLECTION
    # what the collection runs before tuning: hybrid with the defaults (DBSF, BM25 as ingested);
    # tune tests its recommendation against it on held-out folds (report.versus_current)
    settings = Settings(home=BENCH_HOME, collection=collection, search={"mode": "hybrid"})
    embedder = get_embedder(settings)  # the default backend (ONNX fp32: torch's vectors)
    ingest_s = ensure_collection(settings, embedder, dataset)
    report = tune(
        dataset, settings=settings, embedder=embedder, options=TuneOptions(folds=args.folds)
    )
    results = results_dir(args.quick)
    results.mkdir(parents=True, exist_ok=True)
    name = "tune" if not cut or args.quick else f"tune_q{cut.split(',')[0]}"
    write_html(report, results / f"{name}.html")
    write_plots(report, results / name)

    dense = [c for c in report.configurations if c.mode == "dense"]
    baseline = next(
        c
        for c in dense
        if c.search.exact and c.variant.startswith("none/") and c.aggregation.n == 1
    )
    cheap = sorted(
        (
            c
            for c in dense
            if c.memory_ratio <= MEMORY_RATIO
            and c.aggregation == baseline.aggregation
            and c.ndcg >= baseline.ndcg - NDCG_SLACK
        ),
        key=lambda c: (c.memory_ratio, c.latency_p95_ms, -c.ndcg),
    )
    best_cheap = cheap[0] if cheap else None
    hybrid_cv = report.cross_validation.get("hybrid")
    # the best hybrid configuration of each fusion family on each BM25 build (best chunk per
    # document; prefetch depth and weights are part of the family's best)
    by_fusion: dict[str, dict[str, Any]] = {}
    for c in report.configurations:
        s = c.search
        if c.mode != "hybrid" or c.aggregation.method != "max":
            continue
        bm25 = c.variant.split("/bm25-")[1] if "/bm25-" in c.variant else "k1.2-b0.75 (ingest's)"
        family = s.fusion if s.fusion != "rrf" else f"rrf-k{s.rrf_k or 60}"
        if s.fusion == "rrf" and s.fusion_weights:
            family += " weighted"
        key = f"{family} | bm25 {bm25}"
        if key not in by_fusion or c.ndcg > by_fusion[key]["ndcg@10"]:
            by_fusion[key] = {"ndcg@10": c.ndcg, "config": c.id, "p95_ms": c.latency_p95_ms}
    rec = report.recommendation
    summary: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "dataset": "scifact test"
        + (f" (slice: {cut.replace(',', ' queries, their docs + ')} others)" if cut else ""),
        "collection": collection,
        "points": report.n_points,
        "queries": report.n_queries,
        "ingest_s": round(ingest_s, 1),
        "sweep_s": round(report.seconds, 1),
        "variants": len(report.variants),
        "configurations": len(report.configurations),
        "unquantized_exact_ndcg@10": baseline.ndcg,
        "cheapest_within_slack": best_cheap.model_dump(mode="json") if best_cheap else None,
        "hybrid_cross_validation": hybrid_cv.model_dump(mode="json") if hybrid_cv else None,
        "hybrid_best_by_fusion": dict(sorted(by_fusion.items(), key=lambda kv: -kv[1]["ndcg@10"])),
        "recommendation": rec.model_dump(mode="json"),
        "versus_current": (
            report.versus_current.model_dump(mode="json") if report.versus_current else None
        ),
        "pareto": report.pareto,
        "warnings": report.warnings,
        "targets": {
            "memory ratio": MEMORY_RATIO,
            "ndcg slack": NDCG_SLACK,
            "hybrid held-out ndcg@10": HYBRID_TARGET,
            "sweep s": SWEEP_S_TARGET,
        },
    }
    summary["targets_met"] = {
        "quantized within slack": best_cheap is not None,
        "hybrid held-out": hybrid_cv is not None and hybrid_cv.held_out_ndcg >= HYBRID_TARGET,
        "sweep time": report.seconds <= SWEEP_S_TARGET,
    }
    write_results(name, summary, quick=args.quick)
    print_table(
        f"tune on {summary['dataset']}: {report.n_points} points, {report.n_queries} queries, "
        f"{len(report.configurations)} configurations in {report.seconds:.0f} s",
        ["measure", "value", "target", "met"],
        [
            ["unquantized exact nDCG@10", f"{baseline.ndcg:.4f}", "", ""],
            [
                "cheapest config ≤ 0.25x float32 within 0.005",
                f"{best_cheap.id}: nDCG@10 {best_cheap.ndcg:.4f}, {best_cheap.memory_ratio:.3f}x"
                if best_cheap
                else "none",
                "exists",
                verdict(best_cheap is not None),
            ],
            [
                "hybrid nDCG@10, held-out folds",
                f"{hybrid_cv.held_out_ndcg:.4f}" if hybrid_cv else "n/a",
                f"≥ {HYBRID_TARGET}",
                verdict(summary["targets_met"]["hybrid held-out"]),
            ],
            [
                "sweep seconds",
                f"{report.seconds:.0f}",
                f"≤ {SWEEP_S_TARGET:.0f}",
                verdict(summary["targets_met"]["sweep time"]),
            ],
            ["recommended", rec.config or "none", "", ""],
        ],
    )


def tune_section(d: dict[str, Any]) -> list[str]:
    """The RESULTS.md section for ``bench/results/tune.json`` (called by ``report.py``)."""
    met = {k: "**met**" if v else "**missed**" for k, v in d["targets_met"].items()}
    cheap, cv, rec = d["cheapest_within_slack"], d["hybrid_cross_validation"], d["recommendation"]
    out = [
        "## Tuning quantization, HNSW and fusion (`bench/bench_tune.py`)",
        "",
        f"{d['dataset']}, run {d['date']}: `ragsonde tune` on `{d['collection']}` "
        f"({d['points']:,} chunks with dense and BM25 vectors), {d['queries']} queries, the "
        "default "
        f"grid: {d['variants']} index variants, {d['configurations']} configurations, 5-fold "
        "cross-validation over the queries. Command: `python -m bench.bench_tune`.",
        "",
        "| figure | value | target | |",
        "|---|---|---|---|",
        f"| exact float32 dense search, nDCG@10 | {d['unquantized_exact_ndcg@10']:.4f} | | |",
    ]
    if cheap:
        out.append(
            f"| cheapest dense configuration within {d['targets']['ndcg slack']} nDCG@10: "
            f"`{cheap['id']}` | nDCG@10 {cheap['metrics']['ndcg@10']:.4f}, vector memory "
            f"{cheap['memory_ratio']:.3f} × float32 (recall@10 vs exact "
            f"{cheap['recall_vs_exact']:.3f}: "
            f"HNSW loses {cheap['hnsw_loss']:.3f}, quantization {cheap['quantization_loss']:.3f}) "
            f"| ≤ {d['targets']['memory ratio']} × | {met['quantized within slack']} |"
        )
    if cv:
        se = f" ± {cv['held_out_se']:.4f} (standard error)" if cv.get("held_out_se") else ""
        spread = cv.get("spread")
        other = (
            f"; over {spread['splits']} other fold splits {spread['mean']:.4f} "
            f"({spread['min']:.4f} to {spread['max']:.4f})"
            if spread
            else ""
        )
        out.append(
            f"| hybrid nDCG@10 on held-out folds (train {cv['train_ndcg']:.4f}) | "
            f"{cv['held_out_ndcg']:.4f}{se}{other} | ≥ {d['targets']['hybrid held-out ndcg@10']} "
            f"| {met['hybrid held-out']} |"
        )
    out += [
        f"| sweep time, progress bar on | {d['sweep_s']:.0f} s | ≤ {d['targets']['sweep s']:.0f} s "
        f"| {met['sweep time']} |",
        "",
    ]
    if cv:
        out += ["| fold | chosen on the other folds | held-out nDCG@10 |", "|---|---|---|"]
        out += [
            f"| {f['fold']} | `{f['chosen']}` | {f['held_out_ndcg']:.4f} |" for f in cv["per_fold"]
        ]
        out.append("")
    vs = d.get("versus_current")
    if vs:
        c = vs["comparison"]
        out += [
            "**Against what the collection runs now.** The untuned default (hybrid, DBSF, BM25 "
            "as ingested: the `search` settings tune ran with) measured through `ragsonde "
            "eval`'s own path, against tune's choice scored on held-out folds only (each query "
            "under the configuration chosen on the other folds), paired query by query:",
            "",
            "| | nDCG@10 |",
            "|---|---|",
            f"| untuned default (`{vs['current_search']['mode']}`, "
            f"`{vs['current_search']['fusion']}`) | {vs['current_ndcg']:.4f} |",
            f"| tune's choice, held-out folds | {vs['tuned_held_out_ndcg']:.4f} |",
            f"| difference | {c['delta']:+.4f} ({c['confidence']:.0%} interval "
            f"{c['ci_low']:+.4f} to {c['ci_high']:+.4f}; t-test p={c['p_ttest']:.3g}, "
            f"permutation p={c['p_permutation']:.3g}; {c['wins']} wins, {c['ties']} ties, "
            f"{c['losses']} losses) |",
            "",
            f"Verdict: **{vs['verdict']}**.",
            "",
        ]
    out += [
        f"Recommended: `{rec['config']}`: {rec['reason']}",
        "",
        "![nDCG@10 against vector memory](results/tune-memory.svg) "
        "![nDCG@10 against p95 latency](results/tune-latency.svg)",
        "",
        "**Reading.** Quantization is nearly free here when rescoring reads the float32 vectors "
        "back: binary 1-bit keeps nDCG@10 within a few thousandths at 1/32 of the memory. For "
        "hybrid search two knobs matter: BM25 vectors that count each chunk's title twice more "
        "(`bm25_title_weight = 2`, with k1 0.9, b 0.4), and the linear fusion (cosine plus BM25 "
        "over its best candidate, Bruch et al.'s TM2C2, which ragsonde fuses itself from 1000 "
        "candidates per side). The held-out figure is one draw: its standard error over the "
        "queries is about 0.02, and other fold splits of the same sweep give the spread shown. "
        "The target (0.745) sits inside that spread but above the headline split's figure, "
        "so it is reported as missed.",
        "",
    ]
    best = d.get("hybrid_best_by_fusion")
    if best:
        out += [
            "Best hybrid configuration of each fusion on each BM25 build (best chunk per "
            "document; every one over all 300 queries, so not a held-out figure):",
            "",
            "| fusion | BM25 build | nDCG@10 | p95 ms | configuration |",
            "|---|---|---|---|---|",
        ]
        for key, row in best.items():
            family, bm25 = key.split(" | ")
            out.append(
                f"| {family} | {bm25.removeprefix('bm25 ')} | {row['ndcg@10']:.4f} | "
                f"{row['p95_ms']:.2f} | `{row['config']}` |"
            )
        out.append("")
    for w in d["warnings"]:
        out += [f"- {w}"]
    return out


if __name__ == "__main__":
    main()
