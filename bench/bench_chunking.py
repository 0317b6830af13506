"""``ragsonde chunking`` on Chroma's three shared corpora: which chunking, and at what cost?

    .venv/bin/python -m bench.bench_chunking [--quick]

The default sweep (``ragsonde.chunking.DEFAULT_GRID``: recursive 200/0, 400/200 and 800/400
tokens, fixed 200/0, 250/125, 400/200 and 800/400, markdown 200/0, ragsonde's default) over
state_of_the_union, wikitexts and pubmed (one collection per configuration, all three corpora
in it) against their 319 span-labelled questions, with all-MiniLM-L6-v2 and exact search.
Span recall/IoU/precision_Ω at k = 5 and at 1000 retrieved word pieces, document nDCG@10, costs.
The recommended configuration is tested against the best fixed-size window (paired tests on
the same questions). Targets (issue 25):

- the full default sweep, from an empty cache, in at most 15 minutes;
- a re-run after completion in under a minute (every configuration read back).

``--keep``: keep the cache of an earlier (stopped) run: the first sweep resumes it, and its time
is not a cold run's. ``--quick``: state_of_the_union only (76 questions), written to
``bench/results/quick/``. Writes ``bench/results/chunking.json``, ``chunking.html`` and
``chunking-quality.svg`` (the README's plot).
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench._common import BENCH_HOME, DATA, results_dir, write_results

if TYPE_CHECKING:
    from ragsonde.chunking import ChunkingReport, ConfigResult

CHUNKING = DATA / "chunking"
SWEEP_S_TARGET = 15 * 60.0
RERUN_S_TARGET = 60.0
COLUMNS = (
    "span_recall@5",
    "span_iou@5",
    "span_precision_omega",
    "span_recall@1000t",
    "span_iou@1000t",
    "ndcg@10",
)


def quick_benchmark(folder: Path) -> tuple[str, Path]:
    import csv

    rows = []
    with (CHUNKING / "questions.csv").open(encoding="utf-8", newline="") as f:
        for n, row in enumerate(csv.DictReader(f), start=1):
            if row["corpus_id"] == "state_of_the_union":
                refs = [
                    {"doc_id": row["corpus_id"], "start": r["start_index"], "end": r["end_index"]}
                    for r in json.loads(row["references"])
                ]
                rows.append({"query_id": str(n), "query": row["question"], "references": refs})
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sotu.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return str(CHUNKING / "corpora" / "state_of_the_union.md"), path


def per_corpus(report: ChunkingReport) -> dict[str, dict[str, dict[str, float]]]:
    """Per configuration, per corpus: the means of the headline metrics."""
    corpus_of = {qid: refs[0].doc_id for qid, refs in report.references.items()}
    out: dict[str, dict[str, dict[str, float]]] = {}
    for c in report.configurations:
        groups: dict[str, list[dict[str, float]]] = {}
        for qid, row in c.per_question.items():
            groups.setdefault(corpus_of[qid], []).append(row.metrics)
        out[c.label] = {
            corpus: {m: round(sum(r[m] for r in rows) / len(rows), 4) for m in COLUMNS}
            | {"questions": len(rows)}
            for corpus, rows in sorted(groups.items())
        }
    return out


def fixed_tests(report: ChunkingReport) -> tuple[ConfigResult, dict[str, dict[str, Any]]]:
    """The best fixed-size window, and the paired tests of the recommended configuration and of
    the best one (when they differ from it) against it."""
    from ragsonde.evaluate.compare import paired_comparison

    primary = report.primary
    fixed = [c for c in report.configurations if c.config.splitter == "fixed"]
    best_fixed = max(fixed, key=lambda c: c.metrics[primary])
    ids = list(best_fixed.per_question)
    tests: dict[str, dict[str, Any]] = {}
    for who in dict.fromkeys((report.recommended, report.best)):
        if who == best_fixed.label:
            continue
        other = report.config(who)
        for metric in (primary, "span_recall@5", "span_iou@5"):
            a = [best_fixed.per_question[q].metrics[metric] for q in ids]
            b = [other.per_question[q].metrics[metric] for q in ids]
            tests[f"{who} | {metric}"] = paired_comparison(metric, a, b).model_dump(mode="json")
    return best_fixed, tests


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--keep", action="store_true", help="keep the cache of an earlier run (timing: not cold)"
    )
    args = ap.parse_args()

    from ragsonde.chunking import SweepOptions, sweep_chunking
    from ragsonde.chunking.html import quality_cost_svg, write_html
    from ragsonde.config import Settings
    from ragsonde.workspace import Workspace

    if args.quick:
        docs, bench = quick_benchmark(BENCH_HOME / "chunking-quick")
    else:
        docs, bench = str(CHUNKING / "corpora"), CHUNKING / "questions.csv"
    home = BENCH_HOME / ("chunking-home-quick" if args.quick else "chunking-home")
    if not args.keep:
        shutil.rmtree(home, ignore_errors=True)  # the first sweep starts from an empty cache
    settings = Settings(home=home, collection="unused")
    with Workspace(settings) as ws:
        t0 = time.perf_counter()
        ws.embedder.embed_queries(["warm up"])  # the model load is not the sweep's
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        report = sweep_chunking(docs, bench, options=SweepOptions(), workspace=ws)
        sweep_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = sweep_chunking(docs, bench, options=SweepOptions(), workspace=ws)
        rerun_s = time.perf_counter() - t0
    assert again.resumed == [c.label for c in report.configurations], again.resumed

    results = results_dir(args.quick)
    results.mkdir(parents=True, exist_ok=True)
    name = "chunking"
    write_html(report, results / f"{name}.html")
    svg = quality_cost_svg(report).replace("<svg ", '<svg font-family="sans-serif" ', 1)
    (results / f"{name}-quality.svg").write_text(svg, encoding="utf-8")

    primary = report.primary

    best_fixed, tests = fixed_tests(report)
    rows = [
        {
            "config": c.label,
            **{m: c.metrics[m] for m in COLUMNS},
            **c.costs.model_dump(),
            "tokens_p50": c.lengths.p50,
            "tokens_p95": c.lengths.p95,
            "over_window": c.lengths.over_window,
            "versus_best": None
            if c.versus_best is None
            else {
                "delta": round(c.versus_best.delta, 4),
                "p_ttest": c.versus_best.p_ttest,
                "p_permutation": c.versus_best.p_permutation,
                "verdict": c.versus_best.verdict,
            },
        }
        for c in report.configurations
    ]
    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "quick": args.quick,
        "documents": docs,
        "benchmark": str(bench),
        "questions": len(report.questions),
        "embedder": report.embedder,
        "window": report.window,
        "k": report.k,
        "token_budget": report.token_budget,
        "primary": primary,
        "model_load_s": round(load_s, 1),
        "sweep_s": round(sweep_s, 1),
        "rerun_s": round(rerun_s, 2),
        "cold": not args.keep,
        "load_average": [round(x, 1) for x in __import__("os").getloadavg()],
        "configurations": rows,
        "per_corpus": per_corpus(report),
        "best": report.best,
        "recommended": report.recommended,
        "recommendation": report.recommendation,
        "best_fixed": best_fixed.label,
        "versus_best_fixed": tests,
        "warnings": report.warnings,
        "targets_met": {
            "sweep_15_min": sweep_s <= SWEEP_S_TARGET,
            "rerun_under_1_min": rerun_s < RERUN_S_TARGET,
        },
    }
    write_results(name, summary, quick=args.quick)
    print(
        f"{'configuration':<20}"
        + "".join(f"{m:>22}" for m in COLUMNS)
        + f"{'points':>8}{'ingest s':>10}"
    )
    for r in rows:
        print(
            f"{r['config']:<20}"
            + "".join(f"{r[m]:>22.4f}" for m in COLUMNS)
            + f"{r['points']:>8}{r['ingest_s']:>10.1f}"
        )
    print(f"best {report.best}; recommended {report.recommendation}")
    for key, t in tests.items():
        print(
            f"{key} vs best fixed {best_fixed.label}: "
            f"{t['mean_b']:.4f} vs {t['mean_a']:.4f}, delta {t['delta']:+.4f}, "
            f"p(t) {t['p_ttest']:.3g}, p(perm) {t['p_permutation']:.3g}: {t['verdict']}"
        )
    print(
        f"sweep {sweep_s:.1f} s (target <= {SWEEP_S_TARGET:.0f}), re-run {rerun_s:.2f} s "
        f"(target < {RERUN_S_TARGET:.0f}); model load {load_s:.1f} s"
    )
    for w in report.warnings:
        print("warning:", w)


def chunking_section(d: dict[str, Any]) -> list[str]:
    """The RESULTS.md section for ``bench/results/chunking.json`` (called by ``report.py``)."""
    met = {k: "**met**" if v else "**missed**" for k, v in d["targets_met"].items()}
    k, b = d["k"], d["token_budget"]
    out = [
        "## Which chunking (`bench/bench_chunking.py`)",
        "",
        f"Run {d['date']}: `ragsonde chunking` on Chroma's three corpora "
        "(`../shared/data/chunking/corpora`), "
        f"{d['questions']} span-labelled questions, {d['embedder']} (reads {d['window']} word "
        f"pieces), exact search; one temporary collection per configuration.",
        "",
        f"| configuration | span recall@{k} | IoU@{k} | precision_Ω | recall@{b}t | IoU@{b}t | "
        "nDCG@10 | points | vector MB | ingest s | search p50/p95 ms | tokens p50/p95 | "
        f"vs best ({d['primary']}) |",
        "|---|" + "---|" * 13,
    ]
    for r in d["configurations"]:
        v = r["versus_best"]
        vs = (
            "best"
            if v is None
            else f"{v['delta']:+.4f}, p {v['p_permutation']:.3g}: {v['verdict']}"
        )
        name = f"**{r['config']}**" if r["config"] == d["recommended"] else r["config"]
        out.append(
            f"| {name} | {r['span_recall@5']:.4f} | {r['span_iou@5']:.4f} | "
            f"{r['span_precision_omega']:.4f} | {r[f'span_recall@{b}t']:.4f} | "
            f"{r[f'span_iou@{b}t']:.4f} | {r['ndcg@10']:.4f} | {r['points']} | "
            f"{r['vector_memory_mb']:.2f} | {r['ingest_s']:.1f} | {r['search_p50_ms']:.2f}/"
            f"{r['search_p95_ms']:.2f} | {r['tokens_p50']:.0f}/{r['tokens_p95']:.0f} | {vs} |"
        )
    out += ["", f"Recommended: {d['recommendation']}", ""]
    out.append(f"Against the best fixed-size window, {d['best_fixed']} (paired, same questions):")
    out.append("")
    for key, t in d["versus_best_fixed"].items():
        who, metric = key.split(" | ")
        out.append(
            f"- {who} on {metric}: {t['mean_b']:.4f} vs {t['mean_a']:.4f} ({t['delta']:+.4f}; "
            f"paired t-test p {t['p_ttest']:.3g}, permutation p {t['p_permutation']:.3g}, "
            f"{t['confidence']:.0%} CI [{t['ci_low']:+.4f}, {t['ci_high']:+.4f}]): {t['verdict']}"
        )
    out += [
        "",
        "Per corpus, span recall@5 / IoU@5:",
        "",
        "| configuration | " + " | ".join(next(iter(d["per_corpus"].values()))) + " |",
        "|---|" + "---|" * len(next(iter(d["per_corpus"].values()))),
    ]
    for label, corpora in d["per_corpus"].items():
        out.append(
            f"| {label} | "
            + " | ".join(
                f"{m['span_recall@5']:.4f} / {m['span_iou@5']:.4f} ({m['questions']} q)"
                for m in corpora.values()
            )
            + " |"
        )
    out += [
        "",
        f"Timing: the default sweep {d['sweep_s']:.0f} s "
        + ("from an empty cache" if d.get("cold", True) else d.get("timing_note", "(not cold)"))
        + f" (≤ 15 min: {met['sweep_15_min']}), the re-run after completion "
        f"{d['rerun_s']:.1f} s (< 1 min: {met['rerun_under_1_min']}); load average at the end "
        f"{d.get('load_average')} on 2 cores; the model load ({d['model_load_s']} s) before both.",
        "",
    ]
    out += [f"- warning: {w}" for w in d["warnings"]]
    if d.get("reading"):
        out += ["", f"**Reading.** {d['reading']}"]
    return [*out, ""]


if __name__ == "__main__":
    main()
