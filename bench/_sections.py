"""The RESULTS.md sections of the suite's benches, one function per results file (the labels
and tune sections live in their own scripts). Each takes the results JSON and returns lines."""

from __future__ import annotations

from typing import Any


def met_mark(met: bool | None) -> str:
    return "—" if met is None else ("**met**" if met else "**missed**")


def fmt(x: Any, nd: int = 2) -> str:
    return "—" if x is None else f"{x:.{nd}f}" if isinstance(x, float) else str(x)


def query_section(q: dict[str, Any]) -> list[str]:
    b = q["batch"]
    # Since issue 17 the floor is the default backend's encode (ONNX); older runs timed torch's.
    floor = (
        f"{q['backend']} `embed_queries([q])`, the retriever's instance"
        if q.get("backend")
        else "torch `model.encode`"
    )
    out = [
        "## Query path (`bench/bench_query.py`)",
        "",
        f"{q['collection_points']} SciFact abstracts, {q['queries']} queries × {q['repeats']} "
        f"repeats, run {q['date']}; the bare encode and the end-to-end query interleaved per "
        "query.",
        "",
        "| figure | p50 | p95 | p99 | target | |",
        "|---|---|---|---|---|---|",
        f"| bare encode, {floor} (ms) | {fmt(q['bare_encode_ms']['p50'])} | "
        f"{fmt(q['bare_encode_ms']['p95'])} | {fmt(q['bare_encode_ms']['p99'])} | | |",
        f"| ragsonde end to end (ms) | {fmt(q['end_to_end_ms']['p50'])} | "
        f"{fmt(q['end_to_end_ms']['p95'])} | {fmt(q['end_to_end_ms']['p99'])} | "
        f"p95 ≤ 1.3 × bare = {fmt(q['ratio_p95'])} × | {met_mark(q['ratio_p95'] <= 1.3)} |",
        f"| batch of {b['size']} vs {b['size']} single queries | "
        f"{b['batch_qps']:.0f} q/s vs {b['single_qps']:.0f} q/s | | | "
        f"≥ 5 × = {fmt(b['speedup'], 1)} × | {met_mark(b['speedup'] >= 5)} |",
    ]
    torch_ms = q.get("torch_bare_encode_ms")
    if torch_ms:
        out.append(
            f"| … for reference: bare encode, torch `model.encode`, a pass of its own (ms) | "
            f"{fmt(torch_ms['p50'])} | {fmt(torch_ms['p95'])} | {fmt(torch_ms['p99'])} | "
            f"the floor before ONNX | |"
        )
    if "bare_model_speedup" in b:
        out.append(
            f"| … the model's own ceiling: one `encode` of {b['size']} vs {b['size']} `encode` "
            f"calls | {fmt(b['bare_model_speedup'], 1)} × | | | ragsonde's speed-up / the "
            f"model's = {fmt(b['share_of_model_ceiling'])} (≥ 1: the model is the bound) | |"
        )
    peer = q.get("langchain_peer")
    if peer:
        out.append(
            f"| LangChain `similarity_search_with_score` vs ragsonde, same client and data "
            f"({peer['backend']}) | {fmt(peer['langchain_ms']['p50'])} vs "
            f"{fmt(peer['ragsonde_ms']['p50'])} ms | {fmt(peer['langchain_ms']['p95'])} vs "
            f"{fmt(peer['ragsonde_ms']['p95'])} ms | | ragsonde faster: "
            f"{fmt(peer['ratio_p50'])} × | {met_mark(peer['target_met'])} |"
        )
        d = peer.get("defaults")
        if d:
            out.append(
                f"| … each on its default embedded store: LangChain on qdrant-client local mode "
                f"vs ragsonde on Qdrant Edge | {fmt(peer['langchain_ms']['p50'])} vs "
                f"{fmt(d['ragsonde_edge_ms']['p50'])} ms | {fmt(peer['langchain_ms']['p95'])} vs "
                f"{fmt(d['ragsonde_edge_ms']['p95'])} ms | | not the target (different stores): "
                f"{fmt(d['ratio_p50'])} × | |"
            )
    stages = q.get("stages_p50_ms", {})
    out += [
        "",
        "Stage p50s (ms): " + ", ".join(f"{k} {fmt(v)}" for k, v in stages.items()) + ".",
        "",
        "**Reading.** A query is the model: embedding is ~90 % of the end-to-end time, and "
        "search on the embedded engine is well under a millisecond at this size. What ragsonde "
        "adds (validation, payload mapping, the contract response) is the difference between the "
        "first two rows. The floor is the default backend's encode (ONNX Runtime since issue 17, "
        "timed on the very instance the retriever uses); torch's bare encode, the floor before, "
        "is timed after the rest in a pass of its own (100 queries; torch's OpenMP threads keep "
        "spinning after a call and would slow the ONNX calls around them), for reference only. "
        "The batch figure is bounded by the model too: a single query already keeps both cores "
        "busy, so a batch gains only what one-at-a-time calls spend around the model (Python, the "
        "tokenizer, small matrix products). The ONNX backend runs a batch in passes of at most "
        "256 padded tokens (`embed_tokens_per_batch`), longest first; one pass over all 100 "
        "queries was half as fast as one call per query, because its activations leave the "
        "CPU's cache. Same store, ragsonde and LangChain make the same Qdrant call; what is "
        "left between them is the contract's response (validated results, mapped payload "
        "fields).",
        "",
    ]
    return out


def store_section(s: dict[str, Any]) -> list[str]:
    out = [
        "## Store scale (`bench/bench_store.py`)",
        "",
        "Commands: "
        + "; ".join(
            dict.fromkeys(
                f"`{r.get('command', 'an earlier run')}` ({r.get('date', s.get('date', ''))})"
                for r in s.get("runs", [])
            )
        )
        + ". Clustered synthetic "
        "384-dim vectors with url payloads; recall@10 against NumPy exact search.",
        "",
        "| points | backend | upsert pts/s | index build s | search p50 / p95 ms | filtered p50 / "
        "p95 ms | recall@10 (filtered) | RSS growth MiB | disk MiB | reopen + 1st search ms |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in s.get("runs", []):
        for name, b in run.get("backends", {}).items():
            if not isinstance(b, dict) or "points" not in b:
                continue
            sm, fm = b.get("search_ms", {}), b.get("search_filtered_ms", {})
            out.append(
                f"| {b['points']:,} | {name} | {fmt(b.get('upsert_points_per_s'), 0)} | "
                f"{fmt(b.get('build_index_s'))} | {fmt(sm.get('p50'))} / {fmt(sm.get('p95'))} | "
                f"{fmt(fm.get('p50'))} / {fmt(fm.get('p95'))} | {fmt(b.get('recall_at_10'), 3)} "
                f"({fmt(b.get('recall_at_10_filtered'), 3)}) | {fmt(b.get('rss_growth_mib'), 0)} | "
                f"{fmt(b.get('disk_mib'), 1)} | {fmt(b.get('reopen_first_search_ms'), 0)} |"
            )
    sweep_rows = [
        (b["points"], e)
        for run in s.get("runs", [])
        for b in [run.get("backends", {}).get("edge")]
        if isinstance(b, dict) and "points" in b
        for e in b.get("hnsw_ef_sweep", [])
    ]
    if sweep_rows:
        out += [
            "",
            "Edge with `RAGSONDE_HNSW_EF` set (one pass each):",
            "",
            "| points | hnsw_ef | search p50 / p95 ms | filtered p50 / p95 ms | recall@10 "
            "(filtered) |",
            "|---|---|---|---|---|",
        ]
        for n, e in sweep_rows:
            sm, fm = e["search_ms"], e["search_filtered_ms"]
            out.append(
                f"| {n:,} | {e['hnsw_ef']} | {fmt(sm['p50'])} / {fmt(sm['p95'])} | "
                f"{fmt(fm['p50'])} / {fmt(fm['p95'])} | {fmt(e['recall_at_10'], 3)} "
                f"({fmt(e['recall_at_10_filtered'], 3)}) |"
            )
    targets = s.get("targets")
    if targets:
        out += ["", "Targets on the embedded store:", ""]
        out += [
            f"- {t['target']}: {fmt(t.get('value'), 3)} {t.get('unit', '')} → "
            f"{met_mark(t.get('met'))}"
            for t in targets
        ]
    out += [
        "",
        "**Reading.** NumPy exact search is the floor for brute force and grows linearly with "
        "the collection; the HNSW index keeps Qdrant Edge's search nearly flat in size, which is "
        "why it wins from ~100k points on. qdrant-client's local mode is brute force in Python: "
        "fine for tests, never the default.",
        "",
    ]
    return out


def ingest_section(i: dict[str, Any]) -> list[str]:
    t = i["targets_met"]
    return [
        "## Ingest (`bench/bench_ingest.py`)",
        "",
        f"{i['documents']} SciFact documents → {i['chunks']} chunks, run {i['date']}.",
        "",
        "| figure | value | target | |",
        "|---|---|---|---|",
        f"| ingest docs/s vs bare encode of the same chunks | {fmt(i['ingest_docs_per_s'], 1)} vs "
        f"{fmt(i['bare_encode_chunks_docs_per_s'], 1)} = {fmt(i['ratio_vs_bare_chunks'])} × | ≥ "
        "0.9 × | "
        f"{met_mark(t['ingest_vs_bare_encode'])} |",
        f"| … vs bare encode of whole docs truncated at 256 tokens | "
        f"{fmt(i['bare_encode_truncated_docs_per_s'], 1)} docs/s = "
        f"{fmt(i['ratio_vs_bare_truncated_docs'])} × | (not a target: embeds less text) | |",
        f"| re-ingest unchanged corpus | {fmt(i['reingest_s'])} s vs "
        f"{fmt(i['first_ingest_s'], 1)} s "
        f"= {fmt(i['reingest_speedup'], 0)} × | ≥ 20 × | {met_mark(t['reingest_speedup'])} |",
        "| peak RSS at N and 2N documents | "
        + " / ".join(f"{v:.0f} MiB ({k} docs)" for k, v in i["peak_rss_mb"].items())
        + f" = {fmt(i['rss_growth_ratio'])} × | flat (≤ 1.1 ×) | {met_mark(t['memory_flat'])} |",
        "",
        "Peak RSS: "
        + i.get("peak_rss_method", "ru_maxrss of the ingest process (counts this bench's own size)")
        + (f", measured again {i['memory_measured']}" if i.get("memory_measured") else "")
        + ". Before 2026-11-27 it was `ru_maxrss`, which on Linux keeps the high-water mark of "
        "the bench process the child was forked from (torch and the model): both sizes read "
        "1455 MiB, the bench's own size, not the ingest's.",
        "",
        "**Reading.** Ingest is the model: chunking (Rust tokenizer and splitter), reading back "
        "stored hashes and upserting are a few percent. Against a naive script that embeds each "
        "abstract once, truncated at 256 word pieces, ragsonde embeds more text (the rest of long "
        "abstracts, in overlapping chunks), which is what makes them searchable. Memory is the "
        "model plus one batch: documents stream through.",
        "",
    ]


def eval_section(e: dict[str, Any]) -> list[str]:
    m = e.get("metric_computation_s") or e["metric_computation_s_10k_queries_x_100"]
    workload = e.get("metric_workload", "10,000 queries x 100 results")
    return [
        "## Evaluation (`bench/bench_eval.py`)",
        "",
        f"{e['dataset']}, {e['queries']} queries, run {e['date']}.",
        "",
        "| figure | value | target | |",
        "|---|---|---|---|",
        f"| ragsonde eval (collection built) vs BEIR `EvaluateRetrieval` + exact search | "
        f"{fmt(e['ragsonde_eval_s'], 1)} s vs {fmt(e['beir_exact_eval_s'], 1)} s = "
        f"{fmt(e['ratio'])} × "
        f"| ≤ 1.0 × | {met_mark(e['target_met'])} |",
        *(
            [
                f"| … from nothing: ingest + first eval vs BEIR (like for like: both embed the "
                f"corpus) | {fmt(e['ragsonde_build_and_eval_s'], 1)} s vs "
                f"{fmt(e['beir_exact_eval_s'], 1)} s = {fmt(e['ratio_from_nothing'])} × | "
                f"(not the target) | |"
            ]
            if e.get("ratio_from_nothing") is not None
            else []
        ),
        "| nDCG@10 " + ", ".join(f"{k} {v:.4f}" for k, v in e["ndcg@10"].items()) + " | | | |",
        f"| metric computation, {workload} (s) | "
        + ", ".join(f"{k} {v:.2f}" for k, v in m.items())
        + " | | |",
        "",
        "**Reading.** BEIR must embed the whole corpus on every run (it keeps no index); ragsonde "
        "evaluates against the stored collection, one query at a time as a user would, so its "
        "time is the queries' embedding plus search. From nothing, ragsonde's first evaluation "
        "costs "
        "more than BEIR's: it ingests first and embeds every chunk of each abstract (about 1.9 "
        "chunks per SciFact document), where BEIR embeds each abstract once, truncated at 256 word "
        "pieces; on SciFact both reach the same nDCG@10. Metric computation goes through "
        "ir-measures to pytrec_eval, so it costs about what pytrec_eval costs.",
        "",
    ]


def modes_section(d: dict[str, Any]) -> list[str]:
    out = [
        "## Dense, BM25 and hybrid on SciFact (`bench/bench_modes.py`)",
        "",
        f"{d['dataset']}, run {d['date']}. Sparse is Qdrant's BM25 (IDF in the collection), hybrid "
        "fuses both inside Qdrant's query API.",
        "",
        "| mode | nDCG@10 | recall@100 | total p50 ms | search p50 ms |",
        "|---|---|---|---|---|",
    ]
    for name, m in d["modes"].items():
        out.append(
            f"| {name} | {m['ndcg@10']:.4f} | {m['recall@100']:.4f} | "
            f"{fmt(m['latency_total_ms_p50'])} | {fmt(m['latency_search_ms_p50'])} |"
        )
    out += [
        "",
        "Targets: sparse nDCG@10 ≥ 0.66 "
        + met_mark(d["targets_met"]["sparse"])
        + "; hybrid ≥ 0.70 "
        + met_mark(d["targets_met"]["hybrid"])
        + ".",
        "",
    ]
    for name, c in d["comparisons"].items():
        nd = c["ndcg@10"]
        out.append(
            f"- {name}: ΔnDCG@10 {nd['delta']:+.4f} (W/T/L {nd['wins']}/{nd['ties']}/"
            f"{nd['losses']}), paired t-test p = {nd['p_ttest']:.3g}, permutation p = "
            f"{nd['p_permutation']:.3g}, 95 % CI [{nd['ci_low']:+.4f}, {nd['ci_high']:+.4f}]: "
            f"{nd['verdict']}."
        )
    out.append("")
    return out


def index_section(d: dict[str, Any]) -> list[str]:
    h = d["index_health"]
    rec = h["recall_vs_exact"]
    a, e = h["ann_search_ms"], h["exact_search_ms"]
    return [
        "## Index health at 100k chunks (`bench/bench_index.py`, `eval --ann-vs-exact`)",
        "",
        f"{d['points']:,} points: {d['real_chunks']:,} real SciFact chunks plus near-duplicate "
        f"distractors of their vectors (SciFact is too small to chunk into 100k real chunks; "
        f"see the script's docstring). {d['n_queries']} SciFact test queries, each searched "
        "with HNSW and with exact search, 300 chunks deep (what the doc-level evaluation fetches). "
        f"Command: `{d['command']}`, {d['machine'].get('date', '')}.",
        "",
        "| figure | value | target | |",
        "|---|---|---|---|",
        f"| HNSW recall@10 vs exact | {fmt(rec.get('recall@10'), 4)} | ≥ 0.95 | "
        f"{met_mark(d['met'])} |",
        f"| HNSW recall@1 / recall@100 vs exact | {fmt(rec.get('recall@1'), 4)} / "
        f"{fmt(rec.get('recall@100'), 4)} | | |",
        f"| search p50 / p95 ms, HNSW vs exact | {fmt(a['p50'])} / {fmt(a['p95'])} vs "
        f"{fmt(e['p50'])} / {fmt(e['p95'])} | | |",
        "",
        "**Reading.** Both searches return 300 chunks with payloads, so both latencies include "
        "reading 300 payloads; exact search also scores all points. The figures were taken with "
        "the machine loaded by other work (see the store section for unloaded, top-10 figures).",
        "",
    ]


def embed_section(d: dict[str, Any]) -> list[str]:
    b, r, t = d["backends"], d["ratios"], d["targets_met"]
    out = [
        "## Local model backends: torch, ONNX fp32, ONNX int8 (`bench/bench_embed.py`)",
        "",
        f"Each backend in its own process, {d['rounds']} round(s) in alternating order; "
        f"{d['singles']} single SciFact queries after 3 warm-up ones, batches of 100 queries, "
        f"then `ragsonde.ingest` of {d['documents']:,} documents and `ragsonde.evaluate` "
        f"({d['eval_queries']} queries) on them: {d['dataset']}. Cold start: a one-shot "
        f"`ragsonde query` on the demo collection, process start to exit, {d['cold_runs']} per "
        f"backend, alternating. Command: `{d['command']}`, run {d['date']}"
        + (" (quick)." if d["quick"] else "."),
        "",
        "| backend | model load ms | single p50 ms | p95 ms | batch of 100, q/s | "
        "ingest docs/s | nDCG@10 | cold start wall s | cold start CPU s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, x in b.items():
        out.append(
            f"| {name} | {x['model_load_ms']:.0f} | {x['single_p50_ms']:.1f} | "
            f"{x['single_p95_ms']:.1f} | {x['batch100_qps']:.0f} | "
            f"{x['ingest_docs_per_s']:.1f} | {x['ndcg@10']:.4f} | "
            f"{x['cold_start_wall_s']:.2f} | {x['cold_start_cpu_s']:.2f} |"
        )
    out += [
        "",
        "| figure | value | target | |",
        "|---|---|---|---|",
        f"| ONNX fp32 single-query p50 vs torch | {r['fp32_vs_torch_single_p50']:.2f} × | "
        f"≤ 0.6 × | {met_mark(t['fp32_single_p50_le_0.6x_torch'])} |",
        f"| cold start, ONNX fp32 (wall) | {b['onnx-fp32']['cold_start_wall_s']:.2f} s | ≤ 2 s "
        f"| {met_mark(t['cold_start_le_2s'])} |",
        f"| nDCG@10, fp32 vs torch | Δ {r['fp32_ndcg_delta']:.4f} | ≤ 0.001 | "
        f"{met_mark(t['fp32_ndcg_within_0.001'])} |",
        f"| ingest docs/s, int8 vs torch | {r['int8_vs_torch_ingest']:.2f} × | ≥ 1.5 × | "
        f"{met_mark(t['int8_ingest_ge_1.5x_torch'])} |",
        f"| nDCG@10, int8 − fp32 | {r['int8_ndcg_delta']:+.4f} | reported | |",
        "",
        "**Reading.** fp32 ONNX gives torch's vectors (cosine ≥ 0.9999, checked when the model is "
        "exported), so its nDCG@10 matches torch's; the run-time process imports neither torch "
        "nor sentence-transformers. int8 is dynamically quantized (per-channel weights): its "
        "vectors differ from fp32's by a cosine of about 0.98–0.99, and its quality is the "
        "nDCG@10 above, not an assumption. On a machine loaded by other work, wall times "
        "stretch; the CPU seconds of the cold start are the figure the load moves least.",
        "",
    ]
    return out


def history_section(h: dict[str, Any]) -> list[str]:
    o, s = h["overhead"], h["scale"]
    big = h.get("scale_scifact_runs")
    out = [
        "## Run history (`bench/bench_history.py`)",
        "",
        f"Run {h['date']}. Recording: a SciFact eval of {o['queries']} test queries (their "
        "documents and others as distractors), evaluated without and with recording, "
        "interleaved, same process; the recording alone (fingerprint + one SQLite transaction) "
        f"timed inside the recorded runs. Scale ({s.get('date', h['date'])}): one recorded run "
        f"written {s['runs']} times ({s['queries_per_run']} queries each, {s['file_mb']} MB), "
        "the fingerprint changing every 100 runs; each command as a real process beside "
        "`ragsonde --version` (the start-up"
        + (
            ": interpreter and CLI frame; a command line loads only its command's module)."
            if "cli_every_command_s" in s
            else ": interpreter, settings, every command registered)."
        ),
        "",
        "| figure | value | target | |",
        "|---|---|---|---|",
        f"| eval, not recorded / recorded (s, median) | {fmt(o['eval_s'])} / "
        f"{fmt(o['eval_recorded_s'])} (× {fmt(o['ratio_wall'], 3)}) | | |",
        f"| recording alone (s) / share of the eval | {fmt(o['recording_s'], 3)} / "
        f"{o['recording_share']:.1%} | ≤ 5 % | {met_mark(o['target_met'])} |",
        f"| `history list`, library (s) | {fmt(s['list_library_s'], 3)} | < 1 s | "
        f"{met_mark(s['list_library_s'] < 1)} |",
        f"| `history trend ndcg@10` + SVG, library (s) | {fmt(s['trend_library_s'], 3)} | < 1 s "
        f"| {met_mark(s['trend_library_s'] < 1)} |",
    ]
    if "cli_every_command_s" in s:  # a command line loads only its command's module
        load = f" (load average {s['load_average']})" if "load_average" in s else ""
        out += [
            f"| `ragsonde --version` / `--help`, whole process (s): no command / every command "
            f"loaded{load} | {fmt(s['cli_start_s'], 3)} / {fmt(s['cli_every_command_s'], 3)} "
            "| | |",
            f"| `ragsonde history list --json`, whole process (s) / over `--version` | "
            f"{fmt(s['list_cli_s'], 3)} / {fmt(s['list_cli_over_start_s'], 3)} | < 1 s "
            f"| {met_mark(s['list_cli_s'] < 1)} |",
            f"| `ragsonde history trend ndcg@10`, whole process (s) / over `--version` | "
            f"{fmt(s['trend_cli_s'], 3)} / {fmt(s['trend_cli_over_start_s'], 3)} | < 1 s "
            f"| {met_mark(s['trend_cli_s'] < 1)} |",
        ]
    elif "cli_start_s" in s:
        out += [
            f"| `ragsonde --version`, whole process (s) | {fmt(s['cli_start_s'], 3)} | | |",
            f"| `ragsonde history list --json`, whole process (s) / over the start-up | "
            f"{fmt(s['list_cli_s'], 3)} / {fmt(s['list_cli_over_start_s'], 3)} | < 1 s over "
            f"| {met_mark(s['list_cli_over_start_s'] < 1)} |",
            f"| `ragsonde history trend ndcg@10`, whole process (s) / over the start-up | "
            f"{fmt(s['trend_cli_s'], 3)} / {fmt(s['trend_cli_over_start_s'], 3)} | < 1 s over "
            f"| {met_mark(s['trend_cli_over_start_s'] < 1)} |",
        ]
    busy = h.get("scale_under_load")
    if busy:  # a later run beside other work: the process figures move with the load
        out.append(
            f"| the same on {busy['date']}, load average {busy.get('load_average', '?')} on 2 "
            f"cores: `history list` / `trend`, whole process (s) | {fmt(busy['list_cli_s'], 3)} "
            f"/ {fmt(busy['trend_cli_s'], 3)} | | |"
        )
    if big:
        out.append(
            f"| … 1,000 runs of {big['queries_per_run']} queries ({big['file_mb']} MB, "
            f"{big['date']}): list / trend, library (s) | {fmt(big['list_library_s'], 3)} / "
            f"{fmt(big['trend_library_s'], 3)} | < 1 s | "
            f"{met_mark(max(big['list_library_s'], big['trend_library_s']) < 1)} |"
        )
    return [
        *out,
        "",
        "**Reading.** The recording's cost is fixed per run plus one row per (query, metric): "
        "the collection's info, one scroll of 512 payloads, the model weights' hash (once per "
        "file, then remembered in the history), `git rev-parse`, and one transaction. The "
        "wall-time ratio of the two evals is the noisier figure: the machine is shared with "
        "other work, and the ratio moves by more than the recording it contains; the share "
        "timed inside the run is the one the target reads. "
        "`list` and `trend` read only the runs and run-metrics tables (indexed), so the file's "
        "size (per-query rows) does not slow them. As processes, a command line loads only "
        "its own command module, the evaluation package's names load on first use, and "
        "`history list` reads the summary columns without the report models: it imports the "
        "history store and its models, not the retriever, the embedders or numpy (a test "
        "checks it with `-X importtime`). Every process figure moves with the machine's load.",
        "",
    ]
