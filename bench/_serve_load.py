"""The load generator of ``bench/bench_serve.py``: ``ragsonde serve`` processes on loopback, and
closed- and open-loop clients that drive them (latency from the scheduled send, queueing counted).
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from bench._common import latency_summary, percentile
from ragsonde.samples import robotics_docs

#: The latency budget of "capacity at p95 <= 100 ms" (issue 17).
P95_BUDGET_MS = 100.0
COLLECTION = "robotics"


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
def serve(
    home: Path, env: dict[str, str], log: Path
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """``ragsonde serve`` in its own process; yields its base URL and the process."""
    port = free_port()
    env = clean_env(**env)
    cmd = ragsonde(
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--home",
        str(home),
        "--collection",
        COLLECTION,
    )
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


def wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path, timeout_s: float = 600) -> None:
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


def within_budget(run: dict[str, Any]) -> bool:
    """A probe passes: no error, everything sent served, p95 within :data:`P95_BUDGET_MS`."""
    lat = run["latencies"]
    return not run["errors"] and len(lat) >= run["sent"] and percentile(lat, 95) <= P95_BUDGET_MS
