"""Open-loop load test of ``ragsonde serve``: torch vs ONNX, micro-batching off and on, one run.

    .venv/bin/python -m bench.bench_serve [--quick] [--backends torch,onnx] [--window-ms 0]
        [--clients 50] [--duration S] [--no-threads]

Ingests the sample robotics docs (``ragsonde.samples``) with the real ``ragsonde ingest`` into
``.ragsonde-bench/serve`` (once: later runs find it unchanged and skip), copies that home once per
server to a scratch folder, and starts real ``ragsonde serve`` processes (uvicorn) on loopback
ports: for each backend of ``--backends`` (``torch``: ``local:…?backend=torch``; ``onnx``: the
default), one with RAGSONDE_MICROBATCH=0 (off) and one with RAGSONDE_MICROBATCH=1 and
RAGSONDE_MICROBATCH_MS=``--window-ms`` (on). The thread check adds an ONNX server with one
intra-op thread (``…?threads=1``), micro-batching on, beside the default's (the usable cores, at
most 4: 2 here).

1. Capacity: ``--clients`` closed-loop clients send ``POST /v1/query`` back to back to each
   server: the most it serves, whatever the latency.
2. Capacity at p95 <= 100 ms: for each server, a bisection on the open-loop arrival rate between
   0 and 1.1 x its closed-loop capacity (a probe passes when its p95 is within the budget, with no
   error and everything sent served), then a longer run at the rate found, to verify it.
3. Open loop at three rates per backend, from its "off" server's capacity: low (10 %), mid (70 %)
   and overload (130 %), for the micro-batching verdict.

Open loop: requests are scheduled at a fixed arrival rate, whatever the server does, and sent by
an ``httpx.AsyncClient`` with at most ``--clients`` in flight; latency runs from the *scheduled*
send time, so time spent queueing (in the client or the server) counts.

The machine is shared (2 cores, other work, and the load generator itself), so each measurement
is cut into blocks whose order rotates between the servers, and every comparison is a ratio from
the same run; the load average before and after is recorded. Besides throughput, p50/p95/p99 and
errors (target: 0 errors), each run reports the server process's CPU time per request, which
other processes disturb less than wall-clock figures. Prints tables and writes
``bench/results/serve.json``: torch → ONNX capacity at p95 <= 100 ms, the micro-batching verdict
per backend, and the thread check.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench._common import ROOT, command, machine, percentile, print_table, write_results
from bench._serve_load import (
    COLLECTION,
    P95_BUDGET_MS,
    closed_loop,
    cpu_s,
    ingest,
    open_loop,
    serve,
    summarize,
    wait_ready,
    within_budget,
)
from ragsonde.embedders.onnx import default_threads
from ragsonde.samples import demo_queries, robotics_benchmark

HOME = ROOT / ".ragsonde-bench" / "serve"
#: What the package ships, decided over several runs of this script (not this run alone).
SHIPPED = (
    "RAGSONDE_MICROBATCH unset: on for the torch model, off for ONNX Runtime and remote APIs "
    "(each embedder class's microbatch_by_default); the figures behind it are in "
    "ragsonde.server.batcher's docstring"
)
RATES = (("low", 0.10), ("mid", 0.70), ("overload", 1.30))
MODEL = "sentence-transformers/all-MiniLM-L6-v2"
#: --backends name -> RAGSONDE_EMBEDDER. Both give the same vectors, so they share a collection.
BACKENDS = {"torch": f"local:{MODEL}?backend=torch", "onnx": f"local:{MODEL}"}

#: Micro-batching stays off by default unless, in this run, it serves at least this much more
#: at capacity and costs at most this much latency (p50 and p95) at the low rate.
MIN_GAIN = 1.10
MAX_LOW_LOAD_COST = 1.10


def queries() -> list[str]:
    rows = [json.loads(line) for line in robotics_benchmark().read_text().splitlines() if line]
    return [r["query"] for r in rows] + [q["query"] for q in demo_queries()]


@dataclass(frozen=True)
class Server:
    """One ``ragsonde serve`` process of the run: its backend, micro-batching and ONNX threads."""

    name: str
    backend: str
    batched: bool
    threads: int | None = None  # None: the backend's default

    def env(self, window_ms: float) -> dict[str, str]:
        spec = BACKENDS[self.backend]
        if self.threads is not None:
            spec += f"{'&' if '?' in spec else '?'}threads={self.threads}"
        env = {"RAGSONDE_EMBEDDER": spec, "RAGSONDE_MICROBATCH": "1" if self.batched else "0"}
        if self.batched:
            env["RAGSONDE_MICROBATCH_MS"] = f"{window_ms:g}"
        return env


def plan(backends: list[str], thread_check: bool) -> list[Server]:
    servers = [Server(f"{b} {mb}", b, mb == "on") for b in backends for mb in ("off", "on")]
    if thread_check and "onnx" in backends:
        servers.append(Server("onnx on, 1 thread", "onnx", True, threads=1))
    return servers


def decide(
    off: str,
    on: str,
    capacity: dict[str, float],
    runs: dict[str, dict[str, Any]],
    window: float,
) -> dict[str, Any]:
    """This run's verdict on micro-batching by default for one backend (servers ``off`` and
    ``on``): it must serve clearly more at capacity and cost (almost) nothing at low load. The
    decision itself, over runs, is in the docstring of ``ragsonde.server.batcher``."""
    gain = capacity[on] / capacity[off]
    low = runs["low"]
    low_p50 = low[on]["latency_ms"]["p50"] / low[off]["latency_ms"]["p50"]
    low_p95 = low[on]["latency_ms"]["p95"] / low[off]["latency_ms"]["p95"]
    over = runs["overload"]
    over_p95 = over[on]["latency_ms"]["p95"] / over[off]["latency_ms"]["p95"]
    met = gain >= MIN_GAIN and max(low_p50, low_p95) <= MAX_LOW_LOAD_COST
    reason = (
        f"RAGSONDE_MICROBATCH_MS={window:g}: capacity {capacity[on]:.0f} vs "
        f"{capacity[off]:.0f} req/s (x{gain:.2f}); low load p50 x{low_p50:.2f}, p95 "
        f"x{low_p95:.2f}; overload p95 x{over_p95:.2f}. Rule: on by default only if capacity "
        f"x >= {MIN_GAIN} and low-load p50 and p95 x <= {MAX_LOW_LOAD_COST}."
    )
    return {
        "rule_met": met,
        "window_ms": window,
        "capacity_ratio": gain,
        "low_p50_ratio": low_p50,
        "low_p95_ratio": low_p95,
        "overload_p95_ratio": over_p95,
        "min_capacity_ratio": MIN_GAIN,
        "max_low_load_ratio": MAX_LOW_LOAD_COST,
        "reason": reason,
    }


class Bench:
    """The measurements, each in blocks whose server order rotates from block to block."""

    def __init__(
        self,
        servers: dict[str, tuple[Server, str, int]],
        texts: list[str],
        args: argparse.Namespace,
    ) -> None:
        self.servers, self.texts, self.args = servers, texts, args
        self.names = list(servers)

    def order(self, k: int) -> list[str]:
        shift = k % len(self.names)
        return self.names[shift:] + self.names[:shift]

    async def rates(self, rate_of: dict[str, float], seconds: float) -> dict[str, dict[str, Any]]:
        """Each server at its own open-loop rate, ``seconds`` in all, in alternating blocks."""
        blocks: dict[str, list[dict[str, Any]]] = {n: [] for n in self.names}
        cpu = dict.fromkeys(self.names, 0.0)
        for k in range(self.args.blocks):
            for name in self.order(k):
                _server, url, pid = self.servers[name]
                c0 = cpu_s(pid)
                blocks[name].append(
                    await open_loop(
                        url,
                        self.texts,
                        rate_of[name],
                        seconds / self.args.blocks,
                        self.args.clients,
                    )
                )
                cpu[name] += cpu_s(pid) - c0
                await asyncio.sleep(0.5)  # let a backlog clear
        return {n: summarize(rate_of[n], blocks[n], cpu[n]) for n in self.names}

    async def capacity(self) -> tuple[dict[str, float], dict[str, float]]:
        """Closed-loop req/s and server CPU ms per request, for each server."""
        served = {name: [0, 0.0, 0.0] for name in self.names}  # requests, seconds, server CPU s
        for k in range(self.args.blocks):
            for name in self.order(k):
                _server, url, pid = self.servers[name]
                c0 = cpu_s(pid)
                n, secs = await closed_loop(
                    url, self.texts, self.args.clients, self.args.capacity_s / self.args.blocks
                )
                served[name][0] += n
                served[name][1] += secs
                served[name][2] += cpu_s(pid) - c0
        return (
            {name: n / secs for name, (n, secs, _cpu) in served.items()},
            {name: 1000 * cpu / n for name, (n, _s, cpu) in served.items()},
        )

    async def p95_capacity(self, closed: dict[str, float]) -> dict[str, dict[str, Any]]:
        """The highest open-loop rate each server serves with p95 <= the budget: a bisection
        between 0 and 1.1 x its closed-loop capacity, probes alternating between servers, then
        a verification run at the rate found."""
        lo = dict.fromkeys(self.names, 0.0)
        hi = {n: 1.1 * closed[n] for n in self.names}
        probes: dict[str, list[dict[str, Any]]] = {n: [] for n in self.names}
        for k in range(self.args.search_steps):
            for name in self.order(k):
                _server, url, _pid = self.servers[name]
                rate = round((lo[name] + hi[name]) / 2, 1)
                # At least --probe-requests per probe (a p95 needs samples), within 3 x --probe-s.
                probe_s = self.args.probe_s
                seconds = min(max(probe_s, self.args.probe_requests / rate), 3 * probe_s)
                run = await open_loop(url, self.texts, rate, seconds, self.args.clients)
                passed = within_budget(run)
                probes[name].append(
                    {"rate": rate, "p95_ms": percentile(run["latencies"], 95), "passed": passed}
                )
                if passed:
                    lo[name] = rate
                else:
                    hi[name] = rate
                await asyncio.sleep(0.5)
        found = {n: max(1.0, lo[n]) for n in self.names}
        verify = await self.rates(found, self.args.duration)
        return {
            n: {
                "rps": lo[n],  # 0: even the lowest rate probed missed the budget
                "lowest_failing_rps": hi[n] if hi[n] < 1.1 * closed[n] else None,
                "searched_up_to_rps": 1.1 * closed[n],
                "resolution_rps": 1.1 * closed[n] / 2**self.args.search_steps,
                "probes": probes[n],
                "verify": verify[n],
                "verified": lo[n] > 0
                and verify[n]["errors"] == 0
                and verify[n]["latency_ms"]["p95"] <= P95_BUDGET_MS,
            }
            for n in self.names
        }

    async def run(self) -> dict[str, Any]:
        for _server, url, _pid in self.servers.values():  # warm-up: model, allocator, connections
            await closed_loop(url, self.texts, 4, 1.0 if self.args.quick else 3.0)
        capacity, capacity_cpu = await self.capacity()
        print(f"closed-loop capacity: {fmt(capacity)}", flush=True)
        at_budget = await self.p95_capacity(capacity)
        print(
            f"capacity at p95 <= {P95_BUDGET_MS:g} ms: "
            f"{fmt({n: r['rps'] for n, r in at_budget.items()})}",
            flush=True,
        )
        runs: dict[str, dict[str, dict[str, Any]]] = {}
        for label, share in RATES:
            rate_of = {
                n: max(2.0, round(capacity[f"{server.backend} off"] * share, 1))
                for n, (server, _url, _pid) in self.servers.items()
            }
            runs[label] = await self.rates(rate_of, self.args.duration)
        return {
            "capacity_rps": capacity,
            "capacity_cpu_ms_per_request": capacity_cpu,
            "capacity_at_p95_budget": at_budget,
            "runs": runs,
        }


def fmt(values: dict[str, float]) -> str:
    return ", ".join(f"{n} {v:.1f}" for n, v in values.items())


def before_after(backends: list[str], at_budget: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """torch (before) → ONNX (after): req/s at p95 <= the budget, micro-batching off and on."""
    if not {"torch", "onnx"} <= set(backends):
        return {}
    out = {}
    for mb in ("off", "on"):
        before, after = at_budget[f"torch {mb}"]["rps"], at_budget[f"onnx {mb}"]["rps"]
        out[f"microbatch {mb}"] = {
            "torch_rps": before,
            "onnx_rps": after,
            "ratio": after / before if before else None,
        }
    return out


def thread_check(out: dict[str, Any]) -> dict[str, Any]:
    """ONNX intra-op threads, 1 vs the default, both micro-batched: which serves more."""
    one, dflt = "onnx on, 1 thread", "onnx on"
    if one not in out["capacity_rps"]:
        return {}
    budget = out["capacity_at_p95_budget"]
    low = out["runs"]["low"]
    figures = {
        name: {
            "threads": threads,
            "capacity_rps": out["capacity_rps"][name],
            "capacity_cpu_ms_per_request": out["capacity_cpu_ms_per_request"][name],
            "rps_at_p95_budget": budget[name]["rps"],
            "low_load_p50_ms": low[name]["latency_ms"]["p50"],
            "low_load_p95_ms": low[name]["latency_ms"]["p95"],
        }
        for name, threads in ((one, 1), (dflt, default_threads()))
    }
    a, b = figures[one], figures[dflt]
    return {
        "default_threads": default_threads(),
        "servers": figures,
        "capacity_ratio_1_vs_default": a["capacity_rps"] / b["capacity_rps"],
        "p95_budget_ratio_1_vs_default": (
            a["rps_at_p95_budget"] / b["rps_at_p95_budget"] if b["rps_at_p95_budget"] else None
        ),
        "low_p50_ratio_1_vs_default": a["low_load_p50_ms"] / b["low_load_p50_ms"],
    }


def budget_rps(found: dict[str, Any]) -> str:
    """The rate found, or "< R" when every rate probed (the lowest, R) missed the budget."""
    if found["rps"] == 0 and found["lowest_failing_rps"] is not None:
        return f"< {found['lowest_failing_rps']:.1f}"
    return f"{found['rps']:.1f}"


def load_avg() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def print_tables(result: dict[str, Any], args: argparse.Namespace) -> None:
    runs, names = result["runs"], list(result["servers"])
    rows = []
    for label, r in runs.items():
        for name in names:
            x = r[name]
            lat = x["latency_ms"]
            rows.append(
                (
                    f"{label} {x['rate']:g}/s, {name}",
                    f"{x['throughput_rps']:.1f}",
                    f"{lat['p50']:.1f}",
                    f"{lat['p95']:.1f}",
                    f"{lat['p99']:.1f}",
                    f"{x['server_cpu_ms_per_request']:.1f}",
                    f"{x['errors']}/{x['sent']}",
                    "yes" if x["sustained"] else "no",
                )
            )
    print_table(
        f"POST /v1/query, open loop, {args.clients} clients, {args.duration:g} s per run "
        f"(latency from the scheduled send, ms)",
        ["rate, server", "req/s", "p50", "p95", "p99", "CPU ms/req", "errors", "sustained"],
        rows,
        caption="CPU ms/req: the server process's CPU time per request",
    )
    budget = result["capacity_at_p95_budget"]
    print_table(
        f"capacity: closed loop ({args.clients} clients) and at p95 <= {P95_BUDGET_MS:g} ms",
        [
            "server",
            "closed-loop req/s",
            f"req/s at p95 <= {P95_BUDGET_MS:g}",
            "verify p95",
            "verified",
        ],
        [
            (
                n,
                f"{result['capacity_rps'][n]:.1f}",
                budget_rps(budget[n]),
                f"{budget[n]['verify']['latency_ms']['p95']:.1f}",
                "yes" if budget[n]["verified"] else "no",
            )
            for n in names
        ],
    )
    for mb, x in result["before_after_at_p95_budget"].items():
        ratio = "n/a" if x["ratio"] is None else f"x{x['ratio']:.2f}"
        print(f"{mb}: torch {x['torch_rps']:.1f} -> ONNX {x['onnx_rps']:.1f} req/s ({ratio})")
    for backend, d in result["microbatching"].items():
        print(
            f"micro-batching ({backend}), rule {'met' if d['rule_met'] else 'NOT MET'}: "
            f"{d['reason']}"
        )
    t = result["threads"]
    if t:
        print(
            f"ONNX threads 1 vs {t['default_threads']} (micro-batching on): capacity "
            f"x{t['capacity_ratio_1_vs_default']:.2f}, low-load p50 "
            f"x{t['low_p50_ratio_1_vs_default']:.2f}"
        )
    print(f"errors: {result['errors']} (target 0: {'met' if result['target_met'] else 'NOT MET'})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="short runs (about two minutes)")
    ap.add_argument("--backends", default="torch,onnx", help="comma-separated: torch, onnx")
    ap.add_argument(
        "--window-ms", type=float, default=0.0, help="RAGSONDE_MICROBATCH_MS of the 'on' servers"
    )
    ap.add_argument("--clients", type=int, default=50, help="most requests in flight")
    ap.add_argument("--duration", type=float, default=None, help="seconds per open-loop run")
    ap.add_argument("--capacity-s", type=float, default=None, help="seconds per capacity run")
    ap.add_argument("--blocks", type=int, default=None, help="alternating blocks per run")
    ap.add_argument("--search-steps", type=int, default=None, help="bisection steps (p95 budget)")
    ap.add_argument("--probe-s", type=float, default=None, help="seconds per bisection probe")
    ap.add_argument(
        "--probe-requests", type=int, default=None, help="fewest requests per bisection probe"
    )
    ap.add_argument("--no-threads", action="store_true", help="skip the ONNX 1-thread server")
    args = ap.parse_args()
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    unknown = set(backends) - set(BACKENDS)
    if unknown or not backends:
        raise SystemExit(f"--backends: unknown {sorted(unknown)}; use {', '.join(BACKENDS)}")
    args.duration = args.duration or (2.0 if args.quick else 20.0)
    args.capacity_s = args.capacity_s or (2.0 if args.quick else 9.0)
    args.blocks = args.blocks or (1 if args.quick else 3)
    args.search_steps = args.search_steps or (3 if args.quick else 5)
    args.probe_s = args.probe_s or (2.5 if args.quick else 6.0)
    args.probe_requests = args.probe_requests or (20 if args.quick else 60)
    texts = queries()
    load_before = load_avg()
    started = time.perf_counter()
    servers = plan(backends, not args.no_threads)
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        base = Path(tmp)
        ingest(HOME)
        print(f"ingested the sample docs ({time.perf_counter() - started:.0f} s)", flush=True)
        procs = {}
        for i, server in enumerate(servers):  # each server owns its embedded store
            home, log = base / f"s{i}", base / f"s{i}.log"
            shutil.copytree(HOME, home)
            url, proc = stack.enter_context(serve(home, server.env(args.window_ms), log))
            procs[server.name] = (server, url, proc, log)
        for _server, url, proc, log in procs.values():
            wait_ready(url, proc, log)
        print(f"{len(procs)} servers ready ({time.perf_counter() - started:.0f} s)", flush=True)
        live = {n: (s, url, proc.pid) for n, (s, url, proc, _log) in procs.items()}
        out = asyncio.run(Bench(live, texts, args).run())
    runs = out["runs"]
    errors = sum(r[name]["errors"] for r in runs.values() for name in r) + sum(
        b["verify"]["errors"] for b in out["capacity_at_p95_budget"].values()
    )
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "command": command(),
        "machine": machine(),
        "load_avg_1_5_15": {"before": load_before, "after": load_avg()},
        "quick": args.quick,
        "collection": f"sample robotics docs ({COLLECTION})",
        "distinct_queries": len(texts),
        "clients": args.clients,
        "duration_s": args.duration,
        "capacity_s": args.capacity_s,
        "blocks": args.blocks,
        "search_steps": args.search_steps,
        "probe_s": args.probe_s,
        "probe_requests": args.probe_requests,
        "p95_budget_ms": P95_BUDGET_MS,
        "backends": backends,
        "servers": {s.name: s.env(args.window_ms) for s in servers},
        **out,
        "rates": {label: {n: r[n]["rate"] for n in r} for label, r in runs.items()},
        "before_after_at_p95_budget": before_after(backends, out["capacity_at_p95_budget"]),
        "errors": errors,
        "target": "0 errors at every rate, overload included",
        "target_met": errors == 0,
        "microbatching": {
            b: decide(f"{b} off", f"{b} on", out["capacity_rps"], runs, args.window_ms)
            for b in backends
        },
        "microbatching_shipped_default": SHIPPED,
        "threads": thread_check(out),
        "wall_s": time.perf_counter() - started,
    }
    path = write_results("serve", result, quick=args.quick)
    print_tables(result, args)
    print(f"wrote {path} ({result['wall_s']:.0f} s)")


if __name__ == "__main__":
    main()
