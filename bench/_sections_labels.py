"""The RESULTS.md section of ``bench/bench_labels.py`` (``bench/results/labels.json``, and the
100-query slice's ``labels_q100.json`` kept beside it)."""

from __future__ import annotations

from typing import Any

from bench.bench_labels import BM25_SYSTEMS

__all__ = ["labels_section"]


def _llm_reading(d: dict[str, Any]) -> str:
    """What the LLM rows can say, from their own sizes and intervals."""
    llm = {n: r for n, r in d["label_sets"].items() if r["kind"] in ("doc2query", "judge")}
    if not llm:
        return " No LLM label set ran (`--llm ''`)."
    sizes = ", ".join(
        f"`{n}` {r['agreement']['queries']} queries, tau interval "
        f"[{r['agreement']['tau_ci95'][0]:+.2f}, {r['agreement']['tau_ci95'][1]:+.2f}]"
        for n, r in llm.items()
    )
    wide = all(r["agreement"]["tau_ci95"][1] - r["agreement"]["tau_ci95"][0] > 0.5
               for r in llm.values())  # fmt: skip
    return (
        " The LLM rows use a 270M base model on a few queries on 2 CPU cores ("
        + sizes
        + "): they test the path end to end, not what a capable LLM's labels are worth"
        + ("; intervals this wide cannot order eight systems." if wide else ".")
    )


def labels_section(d: dict[str, Any]) -> list[str]:
    """The RESULTS.md section for ``bench/results/labels.json`` (called by ``report.py``)."""
    if "label_sets" not in d:  # results of the four-system version
        return []
    systems = list(d["systems"])
    h = d["human"]
    slice_ = " (the 100-query slice)" if d.get("quick") else ""
    command = f" Command: `{d['command']}`." if d.get("command") else ""
    out = [
        f"## Generated labels vs human labels on SciFact{slice_} (`bench/bench_labels.py`)",
        "",
        f"{d['dataset']}, run {d['date']}, {d['seconds']['total'] / 60:.0f} min: eight systems "
        f"scored with SciFact's human labels and with each label set; Kendall's tau of the "
        f"systems' order against the human order, with a bootstrap 95% interval over queries "
        f"({d['boot']} resamples). Human order: {' > '.join(h['order'])}.{command}",
        "",
        "| label set | queries | tau | 95% interval | same best system | BM25's place | "
        "query words in source | BM25 finds source first |",
        "|---|---|---|---|---|---|---|---|",
        f"| human labels | {h['queries']} | | | | "
        f"{1 + min(h['order'].index(b) for b in BM25_SYSTEMS)} | "
        f"{h['leakage']['term_overlap']:.2f} | {h['leakage']['bm25_top1']:.2f} |",
    ]
    for name, r in d["label_sets"].items():
        a = r["agreement"]
        lk = (r.get("report") or {}).get("leakage") or {}
        overlap = f"{lk['term_overlap']:.2f}" if lk else "—"
        top1 = f"{lk['bm25_top1']:.2f}" if lk.get("bm25_top1") is not None else "—"
        out.append(
            f"| `{name}` | {a['queries']} | {a['tau']:+.3f} | [{a['tau_ci95'][0]:+.2f}, "
            f"{a['tau_ci95'][1]:+.2f}] | {'yes' if a['top1_agrees'] else 'no'} "
            f"({a['top1_agreement_bootstrap']:.0%}) | {a['bm25_rank']} | {overlap} | {top1} |"
        )
    out += [
        "",
        "nDCG@10 per system under each label set:",
        "",
        "| system | human | " + " | ".join(f"`{n}`" for n in d["label_sets"]) + " |",
        "|---|---|" + "---|" * len(d["label_sets"]),
    ]
    for s in systems:
        cells = " | ".join(
            f"{r['ndcg@10'].get(s, float('nan')):.3f}" for r in d["label_sets"].values()
        )
        out.append(f"| {s} | {h['ndcg@10'][s]:.3f} | {cells} |")
    judges = [r for r in d["label_sets"].values() if r["kind"] == "judge"]
    for r in judges:
        ag = r["judge"]["agreement"] or {}
        u = r["judge"]["usage"]
        out += [
            "",
            f"Local judge `{r['judge']['model']}` on the pooled hits (dense and BM25 top-"
            f"{r['judge']['depth']}) of {r['judge']['queries']} human queries: Cohen's kappa "
            f"against the human labels **{ag.get('kappa')}** on {ag.get('pairs')} pairs (raw "
            f"agreement {ag.get('raw_agreement')}; both relevant {ag.get('both_relevant')}, "
            f"human only {ag.get('human_only')}, model only {ag.get('llm_only')}, neither "
            f"{ag.get('both_not')}); {u['calls']} calls, {u['prompt_tokens']} + "
            f"{u['completion_tokens']} tokens, {r['judge']['seconds']:.0f} s.",
        ]
    met = d.get("target_met")
    first = [  # BM25 first, and BM25 finds the source of most generated queries first
        n
        for n, r in d["label_sets"].items()
        if r["agreement"]["bm25_first"]
        and (((r.get("report") or {}).get("leakage") or {}).get("bm25_top1") or 0) >= 0.75
    ]
    out += [
        "",
        "**Reading.** Tau compares the order of the eight systems, so one swapped pair costs "
        "1/14 of it; the interval comes from resampling the queries and shows how little a few "
        "hundred queries can settle between systems this close. The leakage columns say why "
        f"labels rank BM25 first ({', '.join(f'`{n}`' for n in first) or 'none'} here): when "
        "BM25 finds the source of nearly every generated query first, while it finds a relevant "
        f"document first for {h['leakage']['bm25_top1']:.0%} of the human queries, the labels "
        f"measure the benchmark's wording, not the systems.{_llm_reading(d)}",
    ]
    out += [
        "",
        f"Default offline method `{d['default_method']}`; the best here (tau, then top-1, "
        f"then BM25 not first): `{d['best_offline']}`. Target (tau ≥ {d['target_tau']} over "
        "eight systems and BM25 not first): "
        f"{'**met**' if met else '**missed**' if met is not None else 'n/a'}.",
        "",
    ]
    return out
