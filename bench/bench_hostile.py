"""Hostile requests among good ones: does one client's bad input hurt anyone else?

    .venv/bin/python -m bench.bench_hostile [--quick] [--clients 50] [--duration 30] [--rate 0.01]

Ingests the sample robotics docs (``ragsonde.samples``) with the real ``ragsonde ingest`` into a
scratch home and starts one real ``ragsonde serve`` on loopback (the local model, micro-batching
as shipped: concurrent queries are embedded together, which is where one bad text could fail its
neighbours). Then ``--clients`` closed-loop clients send ``POST /v1/query`` back to back for
``--duration`` seconds, twice, in alternating blocks so the machine's other work weighs on both
alike:

- ``clean``: only good queries;
- ``hostile``: the same, with ``--rate`` (1 %) of the requests replaced by a hostile one, in turn:
  a lone surrogate in the text (``"\\ud800"``, as JSON carries it), a lone surrogate in one query
  of a batch, bad JSON, a ``text/plain`` body, and a body over the server's size limit.

A good request succeeds when it answers 200 with ``status: success``; the target is 0 errors
among good requests, and a hostile request must get a 4xx contract error (never a 5xx). Reports
p50/p95/p99 of the good requests in both runs. Prints a table and writes
``bench/results/hostile.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench._common import command, latency_summary, machine, print_table, verdict, write_results
from bench._serve_load import COLLECTION, ingest, serve, wait_ready
from bench.bench_serve import queries

MAX_BODY = 1_048_576  # the server's default RAGSONDE_MAX_BODY_BYTES
JSON = {"content-type": "application/json"}


def _surrogate(texts: list[str], i: int) -> tuple[str, bytes, dict[str, str]]:
    raw = json.dumps({"query_text": texts[i % len(texts)] + " \ud800", "top_k": 5})
    return "/v1/query", raw.encode(), JSON


def _batch_surrogate(texts: list[str], i: int) -> tuple[str, bytes, dict[str, str]]:
    qs = [{"query_text": texts[(i + j) % len(texts)]} for j in range(3)]
    qs[1]["query_text"] += "\udfff"
    return "/v1/query/batch", json.dumps({"queries": qs}).encode(), JSON


def _bad_json(texts: list[str], i: int) -> tuple[str, bytes, dict[str, str]]:
    return "/v1/query", b'{"query_text": "lidar", "top_k": ', JSON


def _text_plain(texts: list[str], i: int) -> tuple[str, bytes, dict[str, str]]:
    raw = json.dumps({"query_text": texts[i % len(texts)]}).encode()
    return "/v1/query", raw, {"content-type": "text/plain"}


def _huge(texts: list[str], i: int) -> tuple[str, bytes, dict[str, str]]:
    return "/v1/query", json.dumps({"query_text": "x" * (2 * MAX_BODY)}).encode(), JSON


#: The hostile requests, sent in turn.
HOSTILE: dict[str, Callable[[list[str], int], tuple[str, bytes, dict[str, str]]]] = {
    "lone_surrogate": _surrogate,
    "batch_lone_surrogate": _batch_surrogate,
    "bad_json": _bad_json,
    "text_plain": _text_plain,
    "huge_body": _huge,
}


class Tally:
    """What one run saw."""

    def __init__(self) -> None:
        self.good_ms: list[float] = []
        self.good_errors: Counter[str] = Counter()
        self.hostile: dict[str, Counter[int]] = {k: Counter() for k in HOSTILE}
        self.hostile_not_contract = 0
        self.seconds = 0.0
        self.sent = 0  # hostile requests so far: the kinds are sent in turn

    def next_kind(self) -> str:
        kinds = list(HOSTILE)
        self.sent += 1
        return kinds[(self.sent - 1) % len(kinds)]

    def to_json(self) -> dict[str, Any]:
        good = len(self.good_ms) + sum(self.good_errors.values())
        sent = sum(sum(c.values()) for c in self.hostile.values())
        return {
            "good_requests": good,
            "good_errors": sum(self.good_errors.values()),
            "good_error_kinds": dict(self.good_errors),
            "good_latency_ms": latency_summary(self.good_ms),
            "good_rps": round(len(self.good_ms) / self.seconds, 1) if self.seconds else None,
            "hostile_requests": sent,
            "hostile_status": {
                k: {str(s): n for s, n in c.items()} for k, c in self.hostile.items()
            },
            "hostile_5xx": sum(n for c in self.hostile.values() for s, n in c.items() if s >= 500),
            "hostile_not_contract_body": self.hostile_not_contract,
            "seconds": round(self.seconds, 2),
        }


async def _client(
    http: httpx.AsyncClient, texts: list[str], rate: float, seed: int, until: float, t: Tally
) -> None:
    rng = random.Random(seed)
    i = seed
    while time.monotonic() < until:
        i += 1
        if rate and rng.random() < rate:
            kind = t.next_kind()
            path, raw, headers = HOSTILE[kind](texts, i)
            try:
                r = await http.post(path, content=raw, headers=headers)
                t.hostile[kind][r.status_code] += 1
                body = r.json()
                if r.status_code >= 400 and not (
                    body.get("status") == "error" or "responses" in body
                ):
                    t.hostile_not_contract += 1
            except (httpx.HTTPError, ValueError):
                t.hostile[kind][0] += 1  # no answer at all counts as a failure (status 0)
            continue
        start = time.perf_counter()
        try:
            r = await http.post("/v1/query", json={"query_text": texts[i % len(texts)]})
            ok = r.status_code == 200 and r.json().get("status") == "success"
            kind = "" if ok else f"http_{r.status_code}"
        except httpx.HTTPError as e:
            kind = type(e).__name__
        if kind:
            t.good_errors[kind] += 1
        else:
            t.good_ms.append((time.perf_counter() - start) * 1000)


async def run_block(url: str, clients: int, seconds: float, rate: float, t: Tally) -> None:
    texts = queries()
    # Idle connections are dropped before uvicorn's 5 s keep-alive timeout: httpx's default
    # expiry is also 5 s, and a request sent on a connection the server closes at that moment
    # fails with ReadError, a client race that says nothing about the server.
    limits = httpx.Limits(
        max_connections=clients, max_keepalive_connections=clients, keepalive_expiry=2.0
    )
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:
        started = time.monotonic()
        until = started + seconds
        await asyncio.gather(
            *(_client(http, texts, rate, 1000 * c + int(started), until, t) for c in range(clients))
        )
        t.seconds += time.monotonic() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="5 s per run, to bench/results/quick/")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--duration", type=float, default=None, help="seconds per run [30; quick 5]")
    ap.add_argument("--rate", type=float, default=0.01, help="share of hostile requests")
    ap.add_argument("--blocks", type=int, default=3, help="alternating blocks per run")
    args = ap.parse_args()
    duration = args.duration or (5.0 if args.quick else 30.0)
    scratch = Path(tempfile.mkdtemp(prefix="ragsonde-hostile-"))
    try:
        home = scratch / "home"
        ingest(home)
        log = scratch / "serve.log"
        runs = {"clean": Tally(), "hostile": Tally()}
        with serve(home, {}, log) as (url, proc):
            wait_ready(url, proc, log)
            # warm-up, not counted
            asyncio.run(run_block(url, args.clients, 2.0, 0.0, Tally()))
            for _ in range(args.blocks):
                for name, rate in (("clean", 0.0), ("hostile", args.rate)):
                    asyncio.run(
                        run_block(url, args.clients, duration / args.blocks, rate, runs[name])
                    )
            alive = proc.poll() is None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    clean, hostile = runs["clean"].to_json(), runs["hostile"].to_json()
    met = (
        clean["good_errors"] == 0
        and hostile["good_errors"] == 0
        and hostile["hostile_5xx"] == 0
        and hostile["hostile_not_contract_body"] == 0
        and hostile["hostile_requests"] > 0
        and alive
    )
    result = {
        "command": command(),
        "machine": machine(),
        "quick": args.quick,
        "clients": args.clients,
        "duration_s": duration,
        "hostile_rate": args.rate,
        "collection": COLLECTION,
        "clean": clean,
        "hostile": hostile,
        "server_alive_after": alive,
        "ratio_p95": round(hostile["good_latency_ms"]["p95"] / clean["good_latency_ms"]["p95"], 3),
        "target": "0 errors among good requests; every hostile request a 4xx contract error",
        "met": met,
    }
    rows = [
        (
            name,
            r["good_requests"],
            r["good_errors"],
            r["good_rps"],
            *(round(r["good_latency_ms"][p], 1) for p in ("p50", "p95", "p99")),
            r["hostile_requests"],
            r["hostile_5xx"],
        )
        for name, r in (("clean", clean), ("hostile", hostile))
    ]
    print_table(
        f"{args.clients} clients, {duration:.0f} s per run, {args.rate:.0%} hostile",
        ["run", "good", "good errors", "good/s", "p50 ms", "p95 ms", "p99 ms", "hostile", "5xx"],
        rows,
        caption=f"target: {result['target']}: {verdict(met)}",
    )
    print(json.dumps(hostile["hostile_status"]))
    print(f"wrote {write_results('hostile', result, quick=args.quick)}")


if __name__ == "__main__":
    main()
