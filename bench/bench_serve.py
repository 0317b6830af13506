"""Open-loop load test of ``ragsonde serve``, with micro-batching off and on in the same run.

    .venv/bin/python bench/bench_serve.py [--quick] [--window-ms 0] [--clients 50] [--duration S]

Ingests the sample robotics docs (``ragsonde.samples``) with the real ``ragsonde ingest`` into
``.ragsonde-bench/serve`` (once: later runs find it unchanged and skip), copies that home twice
to a scratch folder, and starts two real ``ragsonde serve`` processes (uvicorn) on loopback
ports: one with RAGSONDE_MICROBATCH=0 (off), one with RAGSONDE_MICROBATCH=1 and
RAGSONDE_MICROBATCH_MS=``--window-ms`` (on).

1. Capacity: ``--clients`` closed-loop clients send ``POST /v1/query`` back to back to each
   server: the most it serves, roughly the sustainable rate.
2. Open loop: requests are scheduled at a fixed arrival rate, whatever the server does, and
   sent by an ``httpx.AsyncClient`` with at most ``--clients`` in flight; latency runs from the
   *scheduled* send time, so time spent queueing (in the client or the server) counts. Three
   rates, from the "off" server's capacity: low (10 %), mid (70 %) and overload (130 %).

The machine is shared (2 cores, other work, and the load generator itself), so each measurement
is cut into blocks that alternate between the two servers, and every comparison is an on/off
ratio from the same run. Besides throughput, p50/p95/p99 and errors (target: 0 errors), each run
reports the server process's CPU time per request, which other processes disturb less than
wall-clock figures. Prints a table and writes ``bench/results/serve.json``, with the
micro-batching decision and its figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import httpx
from _common import (
    ROOT,
    command,
    latency_summary,
    machine,
    percentile,
    print_table,
    write_results,
)

from ragsonde.samples import demo_queries, robotics_benchmark, robotics_docs
from ragsonde.server.batcher import BATCHED_BY_DEFAULT

COLLECTION = "robotics"
HOME = ROOT / ".ragsonde-bench" / "serve"
#: What the package ships, decided over several runs of this script (not this run alone).
SHIPPED = (
    f"RAGSONDE_MICROBATCH unset: on for the {', '.join(sorted(BATCHED_BY_DEFAULT))} embedder, off "
    "for remote APIs; the figures behind it are in ragsonde.server.batcher's docstring"
)
RATES = (("low", 0.10), ("mid", 0.70), ("overload", 1.30))
#: Micro-batching stays off by default unless, in this run, it serves at least this much more
#: at capacity and costs at most this much latency (p50 and p95) at the low rate.
MIN_GAIN = 1.10
MAX_LOW_LOAD_COST = 1.10


def queries() -> list[str]:
    rows = [json.loads(line) for line in robotics_benchmark().read_text().splitlines() if line]
    return [r["query"] for r in rows] + [q["query"] for q in demo_queries()]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def ragsonde(*args: str) -> list[str]:
    return [sys.executable, "-m", "ragsonde", *args]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGSONDE_")}
    env.update(extra)
    return env


def ingest(home: Path) -> None:
    cmd = ragsonde("ingest", str(robotics_docs()), "--collection", COLLECTION, "--home", str(home))
    done = subprocess.run(cmd, env=clean_env(), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"ingest failed:\n{done.stdout}\n{done.stderr}")


@contextmanager
def serve(home: Path, env: dict[str, str], log: Path):
    """``ragsonde serve`` in its own process; yields its base URL and the process."""
    port = free_port()
    env = clean_env(**env)
    cmd = ragsonde(
        "serve", "--host", "127.0.0.1", "--port", str(port), "--home", str(home),
        "--collection", COLLECTION,
    )  # fmt: skip
    with log.open("w") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=err, stderr=err)
    try:
        yield f"http://127.0.0.1:{port}", proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_ready(url: str, proc: subprocess.Popen, log: Path, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"ragsonde serve exited:\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"ragsonde serve did not get ready:\n{log.read_text()[-3000:]}")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def body(texts: list[str], i: int) -> dict[str, Any]:
    return {"query_text": texts[i % len(texts)], "top_k": 5}


def ok(r: httpx.Response) -> bool:
    return r.status_code == 200 and r.json().get("status") == "success"


async def closed_loop(
    url: str, texts: list[str], clients: int, seconds: float
) -> tuple[int, float]:
    """Requests served, and seconds taken, by ``clients`` clients each sending back to back."""
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    done = 0
    errors = 0
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
        end = time.perf_counter() + seconds

        async def worker(w: int) -> None:
            nonlocal done, errors
            i = w
            while time.perf_counter() < end:
                r = await client.post("/v1/query", json=body(texts, i))
                if ok(r):
                    done += 1
                else:
                    errors += 1
                i += clients

        t0 = time.perf_counter()
        await asyncio.gather(*(worker(w) for w in range(clients)))
        elapsed = time.perf_counter() - t0
    if errors:
        raise SystemExit(f"{errors} errors while measuring capacity at {url}")
    return done, elapsed


async def open_loop(
    url: str, texts: list[str], rate: float, seconds: float, clients: int
) -> dict[str, Any]:
    """Send ``rate`` requests/s for ``seconds`` on a fixed schedule, at most ``clients`` at once.

    Latency is measured from each request's scheduled time, so queueing counts; a request the
    generator itself started late shows in ``dispatch_lag_ms``.
    """
    n = max(1, round(rate * seconds))
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    gate = asyncio.Semaphore(clients)
    latencies: list[float] = []
    lags: list[float] = []
    errors: list[str] = []
    last_done = 0.0
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:

        async def one(i: int, scheduled: float) -> None:
            nonlocal last_done
            lags.append((time.perf_counter() - scheduled) * 1000)
            try:
                async with gate:
                    r = await client.post("/v1/query", json=body(texts, i))
                now = time.perf_counter()
                if ok(r):
                    latencies.append((now - scheduled) * 1000)
                else:
                    errors.append(f"HTTP {r.status_code}: {r.text[:200]}")
                last_done = max(last_done, now)
            except httpx.HTTPError as e:
                errors.append(f"{type(e).__name__}: {e}")

        t0 = time.perf_counter() + 0.05
        tasks = []
        for i in range(n):
            scheduled = t0 + i / rate
            delay = scheduled - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(i, scheduled)))
        await asyncio.gather(*tasks)
    return {
        "sent": n,
        "latencies": latencies,
        "lags": lags,
        "errors": errors,
        "span_s": max(seconds, last_done - t0),
    }


def summarize(rate: float, blocks: list[dict[str, Any]], cpu: float) -> dict[str, Any]:
    """One server at one rate, over its blocks."""
    lat = [x for b in blocks for x in b["latencies"]]
    sent = sum(b["sent"] for b in blocks)
    errors = [e for b in blocks for e in b["errors"]]
    throughput = len(lat) / sum(b["span_s"] for b in blocks)
    return {
        "rate": rate,
        "sent": sent,
        "ok": len(lat),
        "errors": len(errors),
        "error_samples": errors[:5],
        "throughput_rps": throughput,
        "latency_ms": latency_summary(lat) | {"max": max(lat, default=float("nan"))},
        "server_cpu_ms_per_request": 1000 * cpu / max(1, len(lat)),
        "dispatch_lag_p99_ms": percentile([x for b in blocks for x in b["lags"]], 99),
        # Served about as fast as sent, and nobody waited a second: the rate is sustainable.
        "sustained": len(lat) >= 0.97 * sent
        and throughput >= 0.95 * rate
        and percentile(lat, 99) < 1000,
    }


def decide(capacity: dict[str, float], runs: dict[str, dict[str, dict[str, Any]]], window: float):
    """This run's verdict on micro-batching by default: it must serve clearly more at capacity
    and cost (almost) nothing at low load. The decision itself, over runs, is in the docstring
    of ``ragsonde.server.batcher``."""
    gain = capacity["on"] / capacity["off"]
    low = runs["low"]
    low_p50 = low["on"]["latency_ms"]["p50"] / low["off"]["latency_ms"]["p50"]
    low_p95 = low["on"]["latency_ms"]["p95"] / low["off"]["latency_ms"]["p95"]
    over = runs["overload"]
    over_p95 = over["on"]["latency_ms"]["p95"] / over["off"]["latency_ms"]["p95"]
    met = gain >= MIN_GAIN and max(low_p50, low_p95) <= MAX_LOW_LOAD_COST
    reason = (
        f"RAGSONDE_MICROBATCH_MS={window:g}: capacity {capacity['on']:.0f} vs "
        f"{capacity['off']:.0f} req/s (x{gain:.2f}); low load p50 x{low_p50:.2f}, p95 "
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


async def measure(servers: dict[str, tuple[str, int]], texts: list[str], args) -> dict[str, Any]:
    """Capacity, then the three rates; every measurement in blocks alternating off and on."""
    names = list(servers)

    def order(k: int) -> list[str]:
        return names if k % 2 == 0 else names[::-1]

    for url, _pid in servers.values():  # warm-up: model, allocator, connections
        await closed_loop(url, texts, 4, 1.0 if args.quick else 3.0)
    served = {name: [0, 0.0, 0.0] for name in names}  # requests, seconds, server CPU s
    for k in range(args.blocks):
        for name in order(k):
            url, pid = servers[name]
            c0 = cpu_s(pid)
            n, secs = await closed_loop(url, texts, args.clients, args.capacity_s / args.blocks)
            served[name][0] += n
            served[name][1] += secs
            served[name][2] += cpu_s(pid) - c0
    capacity = {name: n / secs for name, (n, secs, _cpu) in served.items()}
    capacity_cpu = {name: 1000 * cpu / n for name, (n, _s, cpu) in served.items()}
    runs: dict[str, dict[str, dict[str, Any]]] = {}
    for label, share in RATES:
        rate = max(2.0, round(capacity["off"] * share, 1))
        blocks: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        cpu = dict.fromkeys(names, 0.0)
        for k in range(args.blocks):
            for name in order(k):
                url, pid = servers[name]
                c0 = cpu_s(pid)
                blocks[name].append(
                    await open_loop(url, texts, rate, args.duration / args.blocks, args.clients)
                )
                cpu[name] += cpu_s(pid) - c0
                await asyncio.sleep(0.5)  # let a backlog clear
        runs[label] = {name: summarize(rate, blocks[name], cpu[name]) for name in names}
    return {"capacity_rps": capacity, "capacity_cpu_ms_per_request": capacity_cpu, "runs": runs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="short runs (well under a minute)")
    ap.add_argument(
        "--window-ms", type=float, default=0.0, help="RAGSONDE_MICROBATCH_MS of the 'on' server"
    )
    ap.add_argument("--clients", type=int, default=50, help="most requests in flight")
    ap.add_argument("--duration", type=float, default=None, help="seconds per open-loop run")
    ap.add_argument("--capacity-s", type=float, default=None, help="seconds per capacity run")
    ap.add_argument("--blocks", type=int, default=None, help="alternating blocks per run")
    args = ap.parse_args()
    args.duration = args.duration or (2.0 if args.quick else 30.0)
    args.capacity_s = args.capacity_s or (2.0 if args.quick else 9.0)
    args.blocks = args.blocks or (1 if args.quick else 3)
    texts = queries()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        base = Path(tmp)
        ingest(HOME)
        print(f"ingested the sample docs ({time.perf_counter() - started:.0f} s)", flush=True)
        for name in ("off", "on"):  # each server owns its embedded store
            shutil.copytree(HOME, base / name)
        envs = {
            "off": {"RAGSONDE_MICROBATCH": "0"},
            "on": {"RAGSONDE_MICROBATCH": "1", "RAGSONDE_MICROBATCH_MS": str(args.window_ms)},
        }
        procs = {
            name: stack.enter_context(serve(base / name, env, base / f"{name}.log"))
            for name, env in envs.items()
        }
        for name, (url, proc) in procs.items():
            wait_ready(url, proc, base / f"{name}.log")
        servers = {name: (url, proc.pid) for name, (url, proc) in procs.items()}
        print(f"both servers ready ({time.perf_counter() - started:.0f} s)", flush=True)
        out = asyncio.run(measure(servers, texts, args))
    runs, capacity = out["runs"], out["capacity_rps"]
    decision = decide(capacity, runs, args.window_ms)
    ratios = {
        label: {
            "throughput": r["on"]["throughput_rps"] / r["off"]["throughput_rps"],
            **{q: r["on"]["latency_ms"][q] / r["off"]["latency_ms"][q] for q in ("p50", "p95", "p99")},
            "cpu": r["on"]["server_cpu_ms_per_request"] / r["off"]["server_cpu_ms_per_request"],
        }
        for label, r in runs.items()
    }  # fmt: skip
    errors = sum(r[name]["errors"] for r in runs.values() for name in r)
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "command": command(),
        "machine": machine(),
        "quick": args.quick,
        "collection": f"sample robotics docs ({COLLECTION})",
        "distinct_queries": len(texts),
        "clients": args.clients,
        "duration_s": args.duration,
        "capacity_s": args.capacity_s,
        "blocks": args.blocks,
        "servers": envs,
        "capacity_rps": capacity,
        "capacity_cpu_ms_per_request": out["capacity_cpu_ms_per_request"],
        "rates": {label: runs[label]["off"]["rate"] for label in runs},
        "runs": runs,
        "ratios_on_vs_off": ratios,
        "errors": errors,
        "target": "0 errors at every rate, overload included",
        "target_met": errors == 0,
        "microbatching": decision,
        "microbatching_shipped_default": SHIPPED,
        "wall_s": time.perf_counter() - started,
    }
    path = write_results("serve", result)

    rows = []
    for label, r in runs.items():
        for name in ("off", "on"):
            x = r[name]
            lat = x["latency_ms"]
            rows.append(
                (
                    f"{label} {x['rate']:g}/s, microbatch {name}",
                    f"{x['throughput_rps']:.1f}",
                    f"{lat['p50']:.1f}",
                    f"{lat['p95']:.1f}",
                    f"{lat['p99']:.1f}",
                    f"{x['server_cpu_ms_per_request']:.1f}",
                    f"{x['errors']}/{x['sent']}",
                    "yes" if x["sustained"] else "no",
                )
            )
        q = ratios[label]
        rows.append(
            (
                f"{label}: on / off",
                f"x{q['throughput']:.2f}",
                f"x{q['p50']:.2f}",
                f"x{q['p95']:.2f}",
                f"x{q['p99']:.2f}",
                f"x{q['cpu']:.2f}",
                "",
                "",
            )
        )
    print_table(
        f"POST /v1/query, open loop, {args.clients} clients, {args.duration:g} s per run "
        f"(latency from the scheduled send, ms)",
        ["rate, server", "req/s", "p50", "p95", "p99", "CPU ms/req", "errors", "sustained"],
        rows,
        caption=f"capacity (closed loop, {args.clients} clients): off {capacity['off']:.0f} req/s, "
        f"on {capacity['on']:.0f} req/s; CPU ms/req: the server process's CPU time per request",
    )
    print(
        f"errors: {errors} (target 0: {'met' if errors == 0 else 'NOT MET'}); micro-batching by "
        f"default, this run's rule {'met' if decision['rule_met'] else 'NOT MET'}: "
        f"{decision['reason']}"
    )
    print(f"wrote {path} ({result['wall_s']:.0f} s)")


if __name__ == "__main__":
    main()
