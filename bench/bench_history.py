"""Run history: what recording costs an evaluation, and how fast ``history`` answers.

    .venv/bin/python -m bench.bench_history [--quick] [--runs 1000]

1. Recording overhead. A SciFact eval (all 300 test queries, their documents and 300 others;
   quick: 50 queries, 100 others), built once, then evaluated ``--repeats`` times without and
   with recording, interleaved, same process: the median wall times and their ratio; and the
   recording alone (fingerprint + one transaction), timed inside the same runs. Target: the
   recording adds ≤ 5 % to the eval.
2. ``history`` at scale. The last report recorded ``--runs`` times (1,000) in a fresh file, its
   fingerprint changing every 100 runs; then ``history list`` and ``history trend ndcg@10``
   (SVG written) as real ``ragsonde`` processes, the process start included, and the library
   calls alone; beside them ``ragsonde --version`` (no command loaded) and ``ragsonde --help``
   (every command loaded). Target: each command as a process < 1 s.

Writes ``bench/results/history.json``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import SCIFACT, print_table, require_scifact, results_dir, write_results


def overhead(tmp: Path, n_queries: int, n_extra: int, repeats: int) -> dict[str, object]:
    from bench._common import evaluate_in
    from ragsonde.config import Settings
    from ragsonde.embedders import get_embedder
    from ragsonde.evaluate import EvalOptions
    from ragsonde.history import record as rec
    from ragsonde.ingest import ingest
    from ragsonde.testing import beir_slice

    dataset = beir_slice(SCIFACT, tmp / "slice", n_queries, n_extra)
    settings = Settings(home=tmp / "home", collection="scifact")
    embedder = get_embedder(settings)
    t0 = time.perf_counter()
    ingest(str(dataset), fmt="beir", settings=settings, embedder=embedder)
    build_s = time.perf_counter() - t0
    history = tmp / "history.sqlite"
    opts = EvalOptions(throughput=False)
    recording: list[float] = []
    original = rec.record_eval

    def timed(*args: object, **kw: object) -> int:
        t = time.perf_counter()
        try:
            return original(*args, **kw)  # type: ignore[arg-type]
        finally:
            recording.append(time.perf_counter() - t)

    rec.record_eval = timed
    evaluate_in(dataset, settings=settings, embedder=embedder, options=opts, history=history)
    recording.clear()  # the warm-up (and the weights' first hash) is not counted
    plain, recorded = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        evaluate_in(dataset, settings=settings, embedder=embedder, options=opts, record=False)
        plain.append(time.perf_counter() - t)
        t = time.perf_counter()
        report = evaluate_in(
            dataset, settings=settings, embedder=embedder, options=opts, history=history
        )
        recorded.append(time.perf_counter() - t)
    rec.record_eval = original
    p, r, alone = (
        statistics.median(plain),
        statistics.median(recorded),
        statistics.median(recording),
    )
    return {
        "queries": report.n_queries,
        "build_s": round(build_s, 1),
        "eval_s": round(p, 3),
        "eval_recorded_s": round(r, 3),
        "ratio_wall": round(r / p, 4),
        "recording_s": round(alone, 4),
        "recording_share": round(alone / p, 4),
        "target_share": 0.05,
        "target_met": alone / p <= 0.05,
        "history": str(history),
        "last_run": report.history_run,
    }


def at_scale(tmp: Path, source: Path, run_id: int, runs: int) -> dict[str, object]:
    from ragsonde.history import HistoryStore, trend, write_svg

    with HistoryStore(source) as hs:
        recorded = hs.get(run_id)
        bands = hs.bands(run_id)
    big = tmp / "big.sqlite"
    t0 = time.perf_counter()
    with HistoryStore(big) as hs:
        for i in range(runs):
            search = {**recorded.fingerprint.search, "hnsw_ef": 16 * (1 + i // 100)}
            fp = recorded.fingerprint.model_copy(update={"search": search})
            hs.record(recorded.report, fp, bands)
    fill_s = time.perf_counter() - t0
    size_mb = big.stat().st_size / 1e6

    def cli(*args: str) -> float:
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "ragsonde", "history", *args, "--history", str(big)],
            check=True,
            capture_output=True,
            cwd=tmp,
        )
        return time.perf_counter() - t

    def lib_list() -> float:
        t = time.perf_counter()
        with HistoryStore(big) as hs:
            assert len(hs.runs()) == runs
        return time.perf_counter() - t

    def lib_trend() -> float:
        t = time.perf_counter()
        with HistoryStore(big) as hs:
            write_svg(trend(hs, "ndcg@10"), tmp / "trend.svg")
        return time.perf_counter() - t

    figures = {
        "list_cli_s": statistics.median(cli("list", "--json") for _ in range(3)),
        "trend_cli_s": statistics.median(
            cli("trend", "ndcg@10", "--json", "--out", str(tmp / "t.svg")) for _ in range(3)
        ),
        "list_library_s": statistics.median(lib_list() for _ in range(3)),
        "trend_library_s": statistics.median(lib_trend() for _ in range(3)),
    }

    def start(*args: str) -> float:  # the same process doing nothing
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "ragsonde", *args], check=True, cwd=tmp,
                       capture_output=True)  # fmt: skip
        return time.perf_counter() - t

    # `--version` loads no command module: the interpreter and the CLI's frame; `--help` loads
    # every command (what each command paid before a command line loaded only its own)
    cli_start = statistics.median(start("--version") for _ in range(3))
    cli_all = statistics.median(start("--help") for _ in range(3))
    return {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "runs": runs,
        "queries_per_run": recorded.report.n_queries,
        "fill_s": round(fill_s, 1),
        "file_mb": round(size_mb, 1),
        **{k: round(v, 3) for k, v in figures.items()},
        "cli_start_s": round(cli_start, 3),
        "cli_every_command_s": round(cli_all, 3),
        "list_cli_over_start_s": round(figures["list_cli_s"] - cli_start, 3),
        "trend_cli_over_start_s": round(figures["trend_cli_s"] - cli_start, 3),
        "target_s": 1.0,
        # the target: the command answers in < 1 s, its process start included
        "target_met": max(figures["list_cli_s"], figures["trend_cli_s"]) < 1.0,
        "load_average": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument(
        "--scale-from",
        nargs=2,
        metavar=("HISTORY", "RUN"),
        help="Only part 2, from a run of an existing history; part 1's figures are kept from "
        "bench/results/history.json.",
    )
    args = ap.parse_args()
    if args.scale_from:
        import json

        with tempfile.TemporaryDirectory() as name:
            scale = at_scale(
                Path(name), Path(args.scale_from[0]), int(args.scale_from[1]), args.runs
            )
        old = json.loads((results_dir(False) / "history.json").read_text(encoding="utf-8"))
        print(f"wrote {write_results('history', {**old, 'scale': scale}, quick=False)}: {scale}")
        return
    require_scifact()
    n_queries, n_extra = (50, 100) if args.quick else (300, 300)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        cost = overhead(tmp, n_queries, n_extra, args.repeats)
        scale = at_scale(tmp, Path(str(cost["history"])), int(str(cost["last_run"])), args.runs)
    cost.pop("history")
    cost.pop("last_run")
    result = {"date": time.strftime("%Y-%m-%d %H:%M"), "overhead": cost, "scale": scale}
    print_table(
        "Recording overhead (SciFact eval)",
        ["figure", "value"],
        [
            ["queries", cost["queries"]],
            ["eval, not recorded (s, median)", cost["eval_s"]],
            ["eval, recorded (s, median)", cost["eval_recorded_s"]],
            ["recorded / not (wall)", cost["ratio_wall"]],
            ["recording alone (s)", cost["recording_s"]],
            ["recording / eval (target ≤ 0.05)", cost["recording_share"]],
        ],
    )
    print_table(
        f"history on {scale['runs']} recorded runs",
        ["figure", "seconds"],
        [[k, v] for k, v in scale.items() if k.endswith("_s")],
    )
    print(f"wrote {write_results('history', result, quick=args.quick)}")


if __name__ == "__main__":
    main()
