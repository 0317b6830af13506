"""Run every benchmark, then write ``bench/RESULTS.md`` from their JSON results.

    .venv/bin/python -m bench.run_all [--quick] [--only query,ingest,store,eval,...]

from the repository's root. Each script is also runnable alone
(``python -m bench.bench_<name> [--quick]``); each prints a
table and writes ``bench/results/<name>.json``. ``--quick`` takes about 5 minutes and writes to
``bench/results/quick/``; the full suite about an hour on a fresh clone of a 2-core machine (the
model dominates: the first eval ingests all of SciFact, and BEIR re-encodes it), ~40 minutes once
SciFact is ingested. The 1M-point store run is separate: ``make bench-1m``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from bench._common import ROOT, machine, module_command, results_dir

SCRIPTS = (
    "query",
    "ingest",
    "store",
    "eval",
    "modes",
    "index",
    "serve",
    "hostile",
    "inputs",
    "embed",
    "labels",
    "tune",
    "traffic",
    "distances",
    "explain",
    "history",
    "chunking",
    "splitters",
)
#: Full-run extras: the store run keeps the 1M row (``make bench-1m``, ~30 min alone) in its file.
FULL_ARGS = {"store": ["--merge"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default=",".join(SCRIPTS))
    args = ap.parse_args()
    failed = []
    timings: dict[str, dict[str, object]] = {}
    started = time.perf_counter()
    for name in args.only.split(","):
        extra = ["--quick"] if args.quick else FULL_ARGS.get(name, [])
        cmd = module_command(f"bench.bench_{name}", *extra)
        print(f"\n=== {' '.join(cmd[1:])}", flush=True)
        t0 = time.perf_counter()
        ok = subprocess.run(cmd, check=False, cwd=ROOT).returncode == 0
        if not ok:
            failed.append(name)
        secs = time.perf_counter() - t0
        timings[name] = {
            "seconds": round(secs, 1),
            "ok": ok,
            "command": " ".join(["python", *cmd[1:]]),
        }
        print(f"=== {name}: {secs:.0f} s", flush=True)
    results = results_dir(args.quick)
    results.mkdir(parents=True, exist_ok=True)
    suite = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "quick": args.quick,
        "machine": machine(),
        "scripts": timings,
        "total_s": round(time.perf_counter() - started, 1),
    }
    (results / "suite.json").write_text(json.dumps(suite, indent=2) + "\n", encoding="utf-8")
    report = module_command("bench.report", *(["--quick"] if args.quick else []))
    subprocess.run(report, check=True, cwd=ROOT)
    if failed:
        sys.exit(f"benchmarks failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
