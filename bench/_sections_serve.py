"""The RESULTS.md sections of the serving benches: the HTTP server under load
(``bench/results/serve.json``) and hostile requests among good ones (``hostile.json``)."""

from __future__ import annotations

from typing import Any

from bench._sections import fmt, met_mark


def budget_rps(found: dict[str, Any]) -> str:
    """The rate found, or "< R" when every rate probed (the lowest, R) missed the budget."""
    low = found.get("lowest_failing_rps")
    return f"< {low:.1f}" if found["rps"] == 0 and low is not None else f"{found['rps']:.1f}"


def before_after_ratio(before: dict[str, Any], after: dict[str, Any]) -> str:
    """after / before; a lower bound ("> x") when no rate probed met the budget before."""
    if before["rps"]:
        return f"{after['rps'] / before['rps']:.2f} ×"
    low = before.get("lowest_failing_rps")
    return f"> {after['rps'] / low:.1f} ×" if low and after["rps"] else "—"


def serve_section(d: dict[str, Any]) -> list[str]:
    if "capacity_at_p95_budget" not in d:  # a run from before issue 17 (one backend)
        return [
            "## HTTP server under load (`bench/bench_serve.py`)",
            "",
            "Results predate the torch/ONNX comparison: re-run `python -m bench.bench_serve`.",
            "",
        ]
    cap, budget, names = d["capacity_rps"], d["capacity_at_p95_budget"], list(d["servers"])
    ms = f"{d['p95_budget_ms']:g} ms"
    la = d["load_avg_1_5_15"]
    out = [
        "## HTTP server under load (`bench/bench_serve.py`)",
        "",
        f"{len(names)} `ragsonde serve` processes (uvicorn) over the sample robotics docs: "
        + "; ".join(
            f"{n}: " + ", ".join(f"{k}={v}" for k, v in env.items())
            for n, env in d["servers"].items()
        )
        + f". `POST /v1/query` from a generator with at most {d['clients']} requests in flight; "
        "open-loop latency runs from each request's *scheduled* send, so queueing counts. "
        f"Every measurement is cut into {d['blocks']} blocks whose server order rotates. "
        f"Load average (1/5/15 min) {la['before']} before, {la['after']} after: the machine is "
        f"shared. Command: `{d['command']}`, run {d['date']}.",
        "",
        f"**Capacity at p95 ≤ {ms}**: per server, a {d['search_steps']}-step bisection on the "
        f"open-loop rate (probes of {d['probe_s']:g} s and at least {d.get('probe_requests', 0)} "
        "requests) between 0 and 1.1 × its closed-loop "
        f"capacity, then a {d['duration_s']:g} s run at the rate found to verify it.",
        "",
        f"| server | closed-loop req/s | req/s at p95 ≤ {ms} | verify: p95 ms, errors | "
        "server CPU ms/req at capacity |",
        "|---|---|---|---|---|",
    ]
    for n in names:
        v = budget[n]["verify"]
        out.append(
            f"| {n} | {cap[n]:.1f} | {budget_rps(budget[n])} | {fmt(v['latency_ms']['p95'], 1)}, "
            f"{v['errors']}/{v['sent']} "
            f"({'verified' if budget[n]['verified'] else 'not verified'}) "
            f"| {fmt(d['capacity_cpu_ms_per_request'][n], 1)} |"
        )
    ba = d.get("before_after_at_p95_budget") or {}
    if ba:
        out += [
            "",
            f"| req/s at p95 ≤ {ms} | before (torch) | after (ONNX) | ratio |",
            "|---|---|---|---|",
        ]
        for mb in ("off", "on"):
            before, after = budget[f"torch {mb}"], budget[f"onnx {mb}"]
            out.append(
                f"| micro-batching {mb} | {budget_rps(before)} | {budget_rps(after)} | "
                f"{before_after_ratio(before, after)} |"
            )
    out += [
        "",
        "| rate | server | req/s | p50 ms | p95 ms | p99 ms | server CPU ms/req | errors | "
        "sustained |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, runs in d["runs"].items():
        for n in names:
            r = runs[n]
            lat = r["latency_ms"]
            out.append(
                f"| {label}, {r['rate']:g}/s | {n} | {r['throughput_rps']:.1f} | "
                f"{fmt(lat['p50'], 1)} | {fmt(lat['p95'], 1)} | {fmt(lat['p99'], 1)} | "
                f"{fmt(r['server_cpu_ms_per_request'], 1)} | {r['errors']}/{r['sent']} | "
                f"{'yes' if r['sustained'] else 'no'} |"
            )
    out += [
        "",
        "| figure | value | target | |",
        "|---|---|---|---|",
        f"| errors, every rate and server | {d['errors']} | 0 | {met_mark(d['target_met'])} |",
    ]
    for backend, mb in d["microbatching"].items():
        out += [
            f"| {backend} micro-batching: capacity on / off | {fmt(mb['capacity_ratio'])} × | "
            f"≥ {mb['min_capacity_ratio']:.2f} × to be on by default | "
            f"{met_mark(mb['capacity_ratio'] >= mb['min_capacity_ratio'])} |",
            f"| {backend} micro-batching: low-load p50 / p95, on / off | "
            f"{fmt(mb['low_p50_ratio'])} × / {fmt(mb['low_p95_ratio'])} × | "
            f"≤ {mb['max_low_load_ratio']:.2f} × | "
            f"{met_mark(max(mb['low_p50_ratio'], mb['low_p95_ratio']) <= mb['max_low_load_ratio'])}"
            " |",
            f"| {backend} micro-batching: overload p95, on / off | "
            f"{fmt(mb['overload_p95_ratio'])} × | | |",
        ]
    t = d.get("threads") or {}
    if t:
        out.append(
            f"| ONNX intra-op threads 1 vs {t['default_threads']} (default), micro-batching on: "
            f"closed-loop capacity / req/s at p95 ≤ {ms} / low-load p50 | "
            f"{fmt(t['capacity_ratio_1_vs_default'])} × / "
            f"{fmt(t['p95_budget_ratio_1_vs_default'])} × / "
            f"{fmt(t['low_p50_ratio_1_vs_default'])} × | | |"
        )
    out += [
        "",
        "The micro-batching decision, with every run's figures, is in "
        "`ragsonde.server.batcher`'s docstring.",
        "",
        "**Reading.** The server is the model: one forward pass per embedding call, on the 2 "
        "cores it shares here with the load generator and other work, so the open-loop rates are "
        "set from each backend's measured capacity (low 10 %, mid 70 %, overload 130 % of it "
        "without micro-batching). Past capacity, latency counted from the scheduled send grows "
        "with the backlog for as long as the overload lasts; an error would be a failed query or "
        "a 60 s timeout. Micro-batching embeds the queries that queue while the model is busy in "
        "one call instead of many concurrent single calls (compare the CPU column); at low load "
        "each batch holds one query and the batcher only adds a thread hand-off. When the load "
        "average is several times the cores (see above), other processes take the CPU in "
        "bursts: a p95 of 100 ms is then near the machine's noise floor, and one run's "
        "micro-batching verdict is a data point, not a decision. The server's CPU per query is "
        "the figure the load moves least.",
        "",
    ]
    return out


def hostile_section(d: dict[str, Any]) -> list[str]:
    c, h = d["clean"], d["hostile"]
    cl, hl = c["good_latency_ms"], h["good_latency_ms"]
    kinds = ", ".join(
        f"{kind} " + "/".join(f"{n}×{s}" for s, n in sorted(st.items())) if st else f"{kind} 0"
        for kind, st in h["hostile_status"].items()
    )
    return [
        "## Hostile requests among good ones (`bench/bench_hostile.py`)",
        "",
        f"{d['clients']} closed-loop clients against one real `ragsonde serve` (the sample "
        "robotics "
        f"docs, micro-batching as shipped), {d['duration_s']:.0f} s with no hostile requests and "
        f"{d['duration_s']:.0f} s with {d['hostile_rate']:.0%} of them hostile, in alternating "
        f"blocks. Command: `{d['command']}`, {d['machine'].get('date', '')}.",
        "",
        "| run | good requests | errors among good | good/s | p50 ms | p95 ms | p99 ms |",
        "|---|---|---|---|---|---|---|",
        f"| clean | {c['good_requests']} | {c['good_errors']} | {fmt(c['good_rps'], 1)} | "
        f"{fmt(cl['p50'], 1)} | {fmt(cl['p95'], 1)} | {fmt(cl['p99'], 1)} |",
        f"| {d['hostile_rate']:.0%} hostile | {h['good_requests']} | {h['good_errors']} | "
        f"{fmt(h['good_rps'], 1)} | {fmt(hl['p50'], 1)} | {fmt(hl['p95'], 1)} | "
        f"{fmt(hl['p99'], 1)} |",
        "",
        f"Hostile requests: {h['hostile_requests']} ({kinds}; status 0 = no answer), "
        f"{h['hostile_5xx']} answered 5xx, {h['hostile_not_contract_body']} without a contract "
        f"error body. Target (0 errors among good requests, every hostile request a 4xx "
        f"contract error): {met_mark(d['met'])}. p95 hostile / clean: {d['ratio_p95']:.2f} ×.",
        "",
    ]


def mcp_section(d: dict[str, Any]) -> list[str]:
    """``ragsonde mcp``'s search tool against the library (``bench/results/mcp.json``)."""
    lib, srv, sdk = d["library_ms"], d["server_ms"], d["sdk_client_ms"]
    return [
        "## MCP server (`bench/bench_mcp.py`)",
        "",
        f"{d['collection_points']} SciFact chunks, {d['queries']} queries (top_k {d['top_k']}) × "
        f"{d['rounds']} alternating rounds, each pass warmed by an untimed one, run "
        f"{d['date']} (load average {d['load_avg_1_5_15']} on {d['cpus']} cores); "
        f"`{d['command']}`.",
        "",
        "| figure | p50 | p95 | p99 | target | |",
        "|---|---|---|---|---|---|",
        f"| library, `Retriever.retrieve` (ms) | {fmt(lib['p50'])} | {fmt(lib['p95'])} | "
        f"{fmt(lib['p99'])} | | |",
        f"| `ragsonde mcp` `search`, JSON-RPC on stdio (ms) | {fmt(srv['p50'])} | "
        f"{fmt(srv['p95'])} | {fmt(srv['p99'])} | p50 ≤ 1.2 × library = "
        f"{fmt(d['ratio_p50'])} × | {met_mark(d['met'])} |",
        f"| the same through the SDK's `ClientSession` (ms) | {fmt(sdk['p50'])} | "
        f"{fmt(sdk['p95'])} | {fmt(sdk['p99'])} | {fmt(d['sdk_ratio_p50'])} × the library | |",
        "",
        f"p50 by round: library {d['library_p50_by_round']}, server "
        f"{d['server_p50_by_round']}, SDK client {d['sdk_client_p50_by_round']}. The SDK "
        "client's extra is its own work: profiled in one process (the SDK's in-memory "
        "transport), 70 % of its `call_tool` is validating the answer against the tool's output "
        "schema with jsonschema (the contract Response: ten results, the search and index "
        "parameters).",
        "",
    ]
