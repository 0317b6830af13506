"""The replay's GIL hand-over, A/B in one process: ``analyse`` of one OTLP file of SciFact
sentences with what ships (searches in requests of ``SEARCH_CHUNK`` = 16 queries, the switch
interval lowered to 1 ms while the replay runs: :mod:`ragsonde.traffic.switching`) and without
(one request a ranking for the whole batch of 64, the interpreter's 5 ms), rounds alternating.

qdrant-edge-py 0.9 holds the GIL while it searches, and CPython hands the GIL over every switch
interval; the embedding worker needs it for a moment between two of the model's passes. What
the change is for is the worker's waiting: each round gives the worker's wall time inside its
embedding calls and its own CPU time there (``time.thread_time``), whose difference is the time
it was off the CPU (waiting for the GIL or for a core), beside the whole run's wall and CPU
seconds, and whether the two reports' JSON is the same.

Run from the repository's root: ``python -m bench.bench_traffic_speed --switch-ab`` (it adds
``switch_ab`` to ``bench/results/traffic_speed.json``).
"""

from __future__ import annotations

import io
import os
import resource
import time
from collections.abc import Callable
from pathlib import Path
from statistics import median
from typing import Any

QUERIES = 16000
ROUNDS = 3
_ARMS = {"before": (10**9, 0.005), "after": (16, 0.001)}  # SEARCH_CHUNK, SWITCH_INTERVAL


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def switch_ab(home: Path, dataset: Path) -> dict[str, Any]:
    from bench._traffic_speed_ab import otlp_workspace
    from bench.bench_traffic_speed import sentences
    from ragsonde.traffic import replay, switching
    from ragsonde.traffic.read import scan_traffic
    from ragsonde.traffic.run import TrafficOptions, analyse

    shipped = (replay.SEARCH_CHUNK, switching.SWITCH_INTERVAL)
    assert shipped == _ARMS["after"], f"the shipped settings are {shipped}, not {_ARMS['after']}"
    texts = sentences(dataset / "corpus.jsonl", QUERIES)
    figures: dict[str, dict[str, list[float]]] = {arm: {} for arm in _ARMS}
    reports: dict[str, str] = {}
    loads: list[float] = []
    worker = {"wall": 0.0, "cpu": 0.0}
    real_embed: Callable[..., Any] = replay.Replayer.embed

    def timed_embed(self: Any, *args: Any) -> Any:
        w, c = time.perf_counter(), time.thread_time()
        try:
            return real_embed(self, *args)
        finally:
            worker["wall"] += time.perf_counter() - w
            worker["cpu"] += time.thread_time() - c

    with otlp_workspace(home, texts) as (ws, path):
        setattr(replay.Replayer, "embed", timed_embed)  # noqa: B010 (typed as a method)
        try:
            for _ in range(ROUNDS):
                for arm, (chunk, interval) in _ARMS.items():
                    replay.SEARCH_CHUNK, switching.SWITCH_INTERVAL = chunk, interval
                    worker.update(wall=0.0, cpu=0.0)
                    t0, c0 = time.perf_counter(), _cpu()
                    report = analyse(scan_traffic([path]), ws, TrafficOptions(record=False))
                    seen = {
                        "wall_s": time.perf_counter() - t0,
                        "cpu_s": _cpu() - c0,
                        "worker_wall_s": worker["wall"],
                        "worker_off_cpu_s": worker["wall"] - worker["cpu"],
                    }
                    for key, value in seen.items():
                        figures[arm].setdefault(key, []).append(round(value, 2))
                    report.created_at = ""
                    out = io.StringIO()
                    report.write_json(out)
                    reports[arm] = out.getvalue()
                    loads.append(round(os.getloadavg()[0], 1))
        finally:
            setattr(replay.Replayer, "embed", real_embed)  # noqa: B010
            replay.SEARCH_CHUNK, switching.SWITCH_INTERVAL = shipped
    return {
        "queries": len(texts),
        "rounds": ROUNDS,
        **{arm: figures[arm] for arm in _ARMS},
        "load_average": loads,
        "identical": reports["before"] == reports["after"],
    }


def switch_ab_line(d: dict[str, Any]) -> str:
    """The RESULTS.md sentence of ``switch_ab``: every round, and the medians."""

    def med(arm: str, key: str) -> float:
        return float(median(d[arm][key]))

    def rounds(arm: str, key: str) -> str:
        return ", ".join(f"{x:.1f}" for x in d[arm][key])

    same = "the same report JSON" if d["identical"] else "**the reports differ**"
    return (
        "The replay's GIL hand-over, A/B in one process (`python -m bench.bench_traffic_speed "
        f"--switch-ab`, `analyse` of an OTLP file of {d['queries']:,} SciFact sentences, "
        f"{d['rounds']} rounds alternating, load average {min(d['load_average']):.1f}-"
        f"{max(d['load_average']):.1f}): searches in requests of 16 queries and a 1 ms switch "
        "interval (what ships) against one request a ranking for the batch of 64 and the "
        "interpreter's 5 ms. The embedding worker was off the CPU (waiting for the GIL or a "
        f"core) {rounds('after', 'worker_off_cpu_s')} s against "
        f"{rounds('before', 'worker_off_cpu_s')} s (medians "
        f"{med('after', 'worker_off_cpu_s'):.1f} and {med('before', 'worker_off_cpu_s'):.1f} s); "
        f"the whole run took {rounds('after', 'wall_s')} s against "
        f"{rounds('before', 'wall_s')} s (medians {med('after', 'wall_s'):.1f} and "
        f"{med('before', 'wall_s'):.1f} s, {med('after', 'wall_s') / med('before', 'wall_s'):.3f}"
        f" ×; CPU {med('after', 'cpu_s'):.1f} and {med('before', 'cpu_s'):.1f} s), {same}."
    )
