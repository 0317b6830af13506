"""Write ``bench/RESULTS.md`` from ``bench/results/*.json`` (run by ``run_all.py``; runnable alone).

Every figure comes from a results file written by a bench script in this folder; the prose only
says how to read them.
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import QUICK, RESULTS  # noqa: E402  (``--quick``: bench/results/quick/)
from _sections import (  # noqa: E402
    before_after_ratio,
    budget_rps,
    embed_section,
    eval_section,
    hostile_section,
    index_section,
    ingest_section,
    met_mark,
    modes_section,
    query_section,
    serve_section,
    store_section,
)
from bench_hybrid_ceiling import hybrid_ceiling_section  # noqa: E402
from bench_labels import labels_section  # noqa: E402
from bench_tune import tune_section  # noqa: E402

#: The full suite's report is ``bench/RESULTS.md``; a quick run's sits beside its results.
OUT = RESULTS / "RESULTS.md" if QUICK else HERE / "RESULTS.md"


def _load(name: str) -> dict[str, Any] | None:
    path = RESULTS / f"{name}.json"
    if not path.is_file():
        return None
    # Older results recorded the script by its absolute path on the machine that ran it: the
    # report names commands relative to the repo (bench/x.py), never a machine's folders.
    text = re.sub(r"(?:/[^\s\"'`/]+)+/(bench/[\w.]+\.py)", r"\1", path.read_text())
    return json.loads(text)


def _machine() -> str:
    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.0f} GiB"
    except OSError:
        pass
    return f"{os.cpu_count()} cores, {mem} RAM, Python {platform.python_version()}, {platform.machine()}"


def targets_summary() -> list[str]:
    """Every target of the suite in one table: figure, target, value, met or missed."""
    rows: list[tuple[str, str, str, bool | None]] = []
    q = _load("query")
    if q:
        rows.append(("query: end to end vs bare encode, p95", "≤ 1.3 ×", f"{q['ratio_p95']:.2f} ×",
                     q["target_met"]))  # fmt: skip
        b = q.get("batch")
        if b:
            rows.append(("query: batch of 100 vs 100 single", "≥ 5 ×", f"{b['speedup']:.1f} × "
                         f"(the model's own: {b['bare_model_speedup']:.1f} ×)", b["speedup"] >= 5))  # fmt: skip
        peer = q.get("langchain_peer")
        if peer:
            rows.append(("query: ragsonde vs LangChain, same store, p50", "< 1 ×",
                         f"{peer['ratio_p50']:.2f} ×", peer["target_met"]))  # fmt: skip
    ho = _load("hostile")
    if ho:
        rows.append(("hostile: errors among good requests at 1 % hostile", "0",
                     f"{ho['hostile']['good_errors']}", ho["met"]))  # fmt: skip
    st = _load("store")
    for t in st["targets"] if st else []:
        rows.append((f"store: {t['target']}", "", f"{t['value']}", t["met"]))
    i = _load("ingest")
    if i:
        t = i["targets_met"]
        rows += [
            ("ingest: docs/s vs bare encode", "≥ 0.9 ×", f"{i['ratio_vs_bare_chunks']:.2f} ×",
             t["ingest_vs_bare_encode"]),
            ("ingest: re-ingest speed-up", "≥ 20 ×", f"{i['reingest_speedup']:.0f} ×",
             t["reingest_speedup"]),
            ("ingest: peak RSS at 2N vs N documents", "≤ 1.1 ×", f"{i['rss_growth_ratio']:.2f} ×",
             t["memory_flat"]),
        ]  # fmt: skip
    e = _load("eval")
    if e:
        rows.append(("eval: SciFact eval wall time vs BEIR (collection built)", "≤ 1.0 ×",
                     f"{e['ratio']:.2f} ×", e["target_met"]))  # fmt: skip
    m = _load("modes")
    if m:
        best = max(v["ndcg@10"] for k, v in m["modes"].items() if k.startswith("hybrid"))
        rows += [
            ("modes: BM25 nDCG@10", "≥ 0.66", f"{m['modes']['sparse']['ndcg@10']:.3f}",
             m["targets_met"]["sparse"]),
            ("modes: best hybrid nDCG@10", "≥ 0.70", f"{best:.3f}", m["targets_met"]["hybrid"]),
        ]  # fmt: skip
    x = _load("index")
    if x:
        r10 = x["index_health"]["recall_vs_exact"]["recall@10"]
        rows.append((f"index: HNSW recall@10 vs exact, {x['points']:,} chunks", "≥ 0.95",
                     f"{r10:.3f}", x["met"]))  # fmt: skip
    sv = _load("serve")
    if sv:
        rows.append(("serve: errors at every rate", "0", str(sv["errors"]), sv["target_met"]))
        budget = sv.get("capacity_at_p95_budget", {})
        if {"torch on", "onnx on"} <= set(budget):
            before, after = budget["torch on"], budget["onnx on"]
            rows.append((f"serve: req/s at p95 ≤ {sv['p95_budget_ms']:g} ms, torch → ONNX "
                         "(micro-batching on)", "reported",
                         f"{budget_rps(before)} → {budget_rps(after)} "
                         f"({before_after_ratio(before, after)})", None))  # fmt: skip
    em = _load("embed")
    if em:
        r, t = em["ratios"], em["targets_met"]
        rows += [
            ("embed: ONNX fp32 single-query p50 vs torch", "≤ 0.6 ×",
             f"{r['fp32_vs_torch_single_p50']:.2f} ×", t["fp32_single_p50_le_0.6x_torch"]),
            ("embed: cold start of a one-shot query (ONNX)", "≤ 2 s",
             f"{em['backends']['onnx-fp32']['cold_start_wall_s']:.2f} s", t["cold_start_le_2s"]),
            ("embed: nDCG@10, ONNX fp32 vs torch", "Δ ≤ 0.001", f"{r['fp32_ndcg_delta']:.4f}",
             t["fp32_ndcg_within_0.001"]),
            ("embed: ingest docs/s, int8 vs torch", "≥ 1.5 ×", f"{r['int8_vs_torch_ingest']:.2f} ×",
             t["int8_ingest_ge_1.5x_torch"]),
        ]  # fmt: skip
    tu = _load("tune")
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
    la = _load("labels")
    if la and "label_sets" in la:
        top = la["label_sets"].get(f"offline:{la['default_method']}", {}).get("agreement", {})
        rows.append(("labels: Kendall's tau, default offline labels vs human, eight systems",
                     "≥ 0.67, BM25 not first", f"{top.get('tau', float('nan')):+.3f}",
                     la["target_met"]))  # fmt: skip
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
    lines = [
        "# Benchmarks",
        "",
        f"Written {time.strftime('%Y-%m-%d %H:%M')} by `bench/report.py` from `bench/results/`. "
        f"Machine: {_machine()}, shared with other work, so every comparison is a ratio measured "
        "in the same run. Re-run: `make bench` (full, ~1 h on a fresh clone), `make bench-1m` (the 1M store row) or `make bench-quick` (~5 min, to `bench/results/quick/`); each "
        "script alone: `.venv/bin/python bench/bench_<name>.py [--quick]`.",
        "",
    ]
    suite = _load("suite")
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
    lines += targets_summary()
    sections = (
        ("query", query_section),
        ("store", store_section),
        ("ingest", ingest_section),
        ("eval", eval_section),
        ("modes", modes_section),
        ("index", index_section),
        ("serve", serve_section),
        ("hostile", hostile_section),
        ("embed", embed_section),
        ("labels", labels_section),
        ("tune", tune_section),
        ("hybrid_ceiling", hybrid_ceiling_section),
    )
    for name, render in sections:
        data = _load(name)
        if data is None:
            lines += [f"## {name}", "", f"No results yet: run `bench/bench_{name}.py`.", ""]
        else:
            lines += render(data)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
