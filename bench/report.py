"""Write ``bench/RESULTS.md`` from ``bench/results/*.json`` (run by ``run_all.py``; runnable alone).

Every figure comes from a results file written by a bench script in this folder; the prose only
says how to read them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import time
from pathlib import Path
from typing import Any

from bench._common import results_dir
from bench._estimate_plan_section import estimate_plan_rows, estimate_plan_section
from bench._estimate_section import estimate_rows, estimate_section
from bench._sections import (
    embed_section,
    eval_section,
    history_section,
    index_section,
    ingest_section,
    met_mark,
    modes_section,
    query_section,
    store_section,
)
from bench._sections_labels import labels_section
from bench._sections_serve import (
    before_after_ratio,
    budget_rps,
    hostile_section,
    mcp_section,
    serve_section,
)
from bench.bench_ab import ab_section
from bench.bench_chunking import chunking_section
from bench.bench_distances import distances_section
from bench.bench_explain import explain_section
from bench.bench_explain_cost import explain_cost_section
from bench.bench_hybrid_ceiling import hybrid_ceiling_section
from bench.bench_inputs import inputs_section
from bench.bench_splitters import splitters_section
from bench.bench_traffic import traffic_section
from bench.bench_traffic_speed import traffic_speed_section, traffic_speed_targets
from bench.bench_tune import tune_section

HERE = Path(__file__).resolve().parent

#: A script as older results recorded it: by its path (absolute on the machine that ran it, or
#: relative to the repo or to bench/), with or without the interpreter before it.
_OLD_SCRIPT = re.compile(r"^(?:\S*python\S*\s+)?(?:\S*/)?(?:bench/)?((?:bench_)?\w+)\.py\b")


def current_command(recorded: str) -> str:
    """A recorded command as it is typed today, from the repo's root: the scripts are modules
    of the ``bench`` package (``python -m bench.bench_store --merge``), and no folder of the
    machine that ran it shows."""
    return _OLD_SCRIPT.sub(r"python -m bench.\1", recorded.strip())


def _commands_current(data: Any) -> Any:
    if isinstance(data, dict):
        return {
            k: current_command(v) if k == "command" and isinstance(v, str) else _commands_current(v)
            for k, v in data.items()
        }
    if isinstance(data, list):
        return [_commands_current(v) for v in data]
    return data


def _load(folder: Path, name: str) -> dict[str, Any] | None:
    path = folder / f"{name}.json"
    if not path.is_file():
        return None
    loaded: dict[str, Any] = _commands_current(json.loads(path.read_text(encoding="utf-8")))
    return loaded


def _machine() -> str:
    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    python = platform.python_version()
    return f"{os.cpu_count()} cores, {mem} RAM, Python {python}, {platform.machine()}"


def targets_summary(folder: Path) -> list[str]:
    """Every target of the suite in one table: figure, target, value, met or missed."""
    rows: list[tuple[str, str, str, bool | None]] = []
    q = _load(folder, "query")
    if q:
        rows.append(
            (
                "query: end to end vs bare encode, p95",
                "≤ 1.3 ×",
                f"{q['ratio_p95']:.2f} ×",
                q["target_met"],
            )
        )
        b = q.get("batch")
        if b:
            rows.append(
                (
                    "query: batch of 100 vs 100 single",
                    "≥ 5 ×",
                    f"{b['speedup']:.1f} × (the model's own: {b['bare_model_speedup']:.1f} ×)",
                    b["speedup"] >= 5,
                )
            )
        peer = q.get("langchain_peer")
        if peer:
            rows.append(
                (
                    "query: ragsonde vs LangChain, same store, p50",
                    "< 1 ×",
                    f"{peer['ratio_p50']:.2f} ×",
                    peer["target_met"],
                )
            )
    mc = _load(folder, "mcp")
    if mc:
        rows.append(
            (
                "mcp: server search vs library retrieve, p50",
                "≤ 1.2 ×",
                f"{mc['ratio_p50']:.2f} ×",
                mc["met"],
            )
        )
    ho = _load(folder, "hostile")
    if ho:
        rows.append(
            (
                "hostile: errors among good requests at 1 % hostile",
                "0",
                f"{ho['hostile']['good_errors']}",
                ho["met"],
            )
        )
    st = _load(folder, "store")
    for t in st["targets"] if st else []:
        rows.append((f"store: {t['target']}", "", f"{t['value']}", t["met"]))
    i = _load(folder, "ingest")
    if i:
        t = i["targets_met"]
        rows += [
            (
                "ingest: docs/s vs bare encode",
                "≥ 0.9 ×",
                f"{i['ratio_vs_bare_chunks']:.2f} ×",
                t["ingest_vs_bare_encode"],
            ),
            (
                "ingest: re-ingest speed-up",
                "≥ 20 ×",
                f"{i['reingest_speedup']:.0f} ×",
                t["reingest_speedup"],
            ),
            (
                "ingest: peak RSS at 2N vs N documents",
                "≤ 1.1 ×",
                f"{i['rss_growth_ratio']:.2f} ×",
                t["memory_flat"],
            ),
        ]
    e = _load(folder, "eval")
    if e:
        rows.append(
            (
                "eval: SciFact eval wall time vs BEIR (collection built)",
                "≤ 1.0 ×",
                f"{e['ratio']:.2f} ×",
                e["target_met"],
            )
        )
    m = _load(folder, "modes")
    if m:
        best = max(v["ndcg@10"] for k, v in m["modes"].items() if k.startswith("hybrid"))
        rows += [
            (
                "modes: BM25 nDCG@10",
                "≥ 0.66",
                f"{m['modes']['sparse']['ndcg@10']:.3f}",
                m["targets_met"]["sparse"],
            ),
            ("modes: best hybrid nDCG@10", "≥ 0.70", f"{best:.3f}", m["targets_met"]["hybrid"]),
        ]
    x = _load(folder, "index")
    if x:
        r10 = x["index_health"]["recall_vs_exact"]["recall@10"]
        rows.append(
            (
                f"index: HNSW recall@10 vs exact, {x['points']:,} chunks",
                "≥ 0.95",
                f"{r10:.3f}",
                x["met"],
            )
        )
    sv = _load(folder, "serve")
    if sv:
        rows.append(("serve: errors at every rate", "0", str(sv["errors"]), sv["target_met"]))
        budget = sv.get("capacity_at_p95_budget", {})
        if {"torch on", "onnx on"} <= set(budget):
            before, after = budget["torch on"], budget["onnx on"]
            rows.append(
                (
                    f"serve: req/s at p95 ≤ {sv['p95_budget_ms']:g} ms, torch → ONNX "
                    "(micro-batching on)",
                    "reported",
                    f"{budget_rps(before)} → {budget_rps(after)} "
                    f"({before_after_ratio(before, after)})",
                    None,
                )
            )
    em = _load(folder, "embed")
    if em:
        r, t = em["ratios"], em["targets_met"]
        rows += [
            (
                "embed: ONNX fp32 single-query p50 vs torch",
                "≤ 0.6 ×",
                f"{r['fp32_vs_torch_single_p50']:.2f} ×",
                t["fp32_single_p50_le_0.6x_torch"],
            ),
            (
                "embed: cold start of a one-shot query (ONNX)",
                "≤ 2 s",
                f"{em['backends']['onnx-fp32']['cold_start_wall_s']:.2f} s",
                t["cold_start_le_2s"],
            ),
            (
                "embed: nDCG@10, ONNX fp32 vs torch",
                "Δ ≤ 0.001",
                f"{r['fp32_ndcg_delta']:.4f}",
                t["fp32_ndcg_within_0.001"],
            ),
            (
                "embed: ingest docs/s, int8 vs torch",
                "≥ 1.5 ×",
                f"{r['int8_vs_torch_ingest']:.2f} ×",
                t["int8_ingest_ge_1.5x_torch"],
            ),
        ]
    tu = _load(folder, "tune")
    if tu:
        m, cheap, cv = tu["targets_met"], tu["cheapest_within_slack"], tu["hybrid_cross_validation"]
        rows += [
            ("tune: vector memory of a config within 0.005 nDCG@10 of float32", "≤ 0.25 ×",
             f"{cheap['memory_ratio']:.3f} ×" if cheap else "none", m["quantized within slack"]),
            ("tune: hybrid nDCG@10, held-out folds", "≥ 0.745",
             f"{cv['held_out_ndcg']:.4f}" if cv else "n/a", m["hybrid held-out"]),
            ("tune: full default sweep on SciFact", "≤ 600 s", f"{tu['sweep_s']:.0f} s",
             m["sweep time"]),
        ]  # fmt: skip
    la = _load(folder, "labels")
    if la and "label_sets" in la:
        top = la["label_sets"].get(f"offline:{la['default_method']}", {}).get("agreement", {})
        rows.append(("labels: Kendall's tau, default offline labels vs human, eight systems",
                     "≥ 0.67, BM25 not first", f"{top.get('tau', float('nan')):+.3f}",
                     la["target_met"]))  # fmt: skip
    es = _load(folder, "estimate")
    if es and "figures" in es and "worst_coverage" in es["figures"]:
        rows += estimate_rows(es)
    ep = _load(folder, "estimate_plan")
    if ep and "pairs" in ep:
        rows += estimate_plan_rows(ep)
    ec = _load(folder, "explain_cost")
    if ec:
        res = ec["results"]
        clock = [abs(v) for r in res for v in r["clock_error"].values()]
        hi = _load(folder, "history")
        cpu = "record_cpu_share_plain" in res[0]
        share = "record_cpu_share_plain" if cpu else "record_share_plain"
        rows += [
            ("eval: --explain / plain, wall (SciFact, 10×)", "≤ 2 ×",
             " / ".join(f"{r['explain_wall_ratio']:.2f} ×" for r in res),
             all(r["explain_wall_ratio"] <= 2 for r in res)),
            ("eval: --explain / plain, peak memory (SciFact, 10×)", "≤ 1.5 ×",
             " / ".join(f"{r['explain_peak_ratio']:.2f} ×" for r in res),
             all(r["explain_peak_ratio"] <= 1.5 for r in res)),
            ("eval: report seconds vs wall less start-up, worst variant", "±5 %",
             f"{max(clock):.1%}", max(clock) <= 0.05),
            (f"eval: history recording, whole process ({'CPU' if cpu else 'wall'}; noisy)",
             "reported", " / ".join(f"{r[share]:+.1%}" for r in res), None),
        ]  # fmt: skip
        if hi:
            o = hi["overhead"]
            rows.append(("eval: history recording, share of a SciFact eval (in process)",
                         "≤ 5 %", f"{o['recording_share']:.1%} ({hi['date']})",
                         o["target_met"]))  # fmt: skip
    tr = _load(folder, "traffic")
    if tr:
        for mode, m in tr["modes"].items():
            p = m["predicted"]
            rows.append((f"traffic: weak SciFact queries without labels, {mode}",
                         "AUC ≥ 0.83, Spearman ≥ 0.55", f"{p['auc']:.3f}, {p['spearman']:+.3f}",
                         p["auc"] >= 0.83 and p["spearman"] >= 0.55))  # fmt: skip
    ts = _load(folder, "traffic_speed")
    if ts:
        rows += traffic_speed_targets(ts)
    if not rows:
        return []
    met = sum(1 for r in rows if r[3])
    judged = sum(1 for r in rows if r[3] is not None)  # "reported" rows have no target
    out = [
        "## Targets at a glance",
        "",
        f"{met} of {judged} met. Each figure's section below gives its command, date and reading.",
        "",
        "| figure | target | value | |",
        "|---|---|---|---|",
    ]
    out += [f"| {f} | {t} | {v} | {met_mark(ok)} |" for f, t, v, ok in rows]
    return [*out, ""]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--quick",
        action="store_true",
        help="read bench/results/quick/ and write its RESULTS.md there, not bench/RESULTS.md",
    )
    args = ap.parse_args()
    folder = results_dir(args.quick)
    # the full suite's report is bench/RESULTS.md; a quick run's sits beside its results
    out = folder / "RESULTS.md" if args.quick else HERE / "RESULTS.md"
    lines = [
        "# Benchmarks",
        "",
        f"Written {time.strftime('%Y-%m-%d %H:%M')} by `python -m bench.report` from "
        "`bench/results/`. "
        f"Machine: {_machine()}, shared with other work, so every comparison is a ratio measured "
        "in the same run. Re-run: `make bench` (full, ~1 h on a fresh clone), `make bench-1m` "
        "(the 1M store row) or `make bench-quick` (~5 min, to `bench/results/quick/`); each "
        "script alone, from the repository's root: `.venv/bin/python -m bench.bench_<name> "
        "[--quick]` "
        "(`--help` for its options).",
        "",
    ]
    suite = _load(folder, "suite")
    if suite is not None:
        kind = "`make bench-quick`" if suite["quick"] else "`make bench`"
        lines += [
            f"Last whole-suite run: {kind}, {suite['date']}, {suite['total_s'] / 60:.1f} min "
            "in all: "
            + ", ".join(
                f"{n} {t['seconds'] / 60:.1f} min" + ("" if t["ok"] else " (FAILED)")
                for n, t in suite["scripts"].items()
            )
            + ". Sections run alone since then say so with their own date and command.",
            "",
        ]
    lines += targets_summary(folder)
    sections = (
        ("query", query_section),
        ("store", store_section),
        ("ingest", ingest_section),
        ("eval", eval_section),
        ("modes", modes_section),
        ("index", index_section),
        ("serve", serve_section),
        ("hostile", hostile_section),
        ("inputs", inputs_section),
        ("embed", embed_section),
        ("labels", labels_section),
        ("labels_q100", labels_section),  # the 100-query slice, kept beside the whole run
        ("tune", tune_section),
        ("hybrid_ceiling", hybrid_ceiling_section),
        ("explain", explain_section),
        ("explain_cost", explain_cost_section),
        ("ab", ab_section),
        ("history", history_section),
        ("chunking", chunking_section),
        ("splitters", splitters_section),
        ("estimate", estimate_section),
        ("estimate_plan", estimate_plan_section),
        ("traffic", traffic_section),
        ("traffic_speed", traffic_speed_section),
        ("distances", distances_section),
        ("mcp", mcp_section),
    )
    for name, render in sections:
        data = _load(folder, name)
        if data is None:
            lines += [f"## {name}", "", f"No results yet: run `python -m bench.bench_{name}`.", ""]
        else:
            lines += render(data)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
