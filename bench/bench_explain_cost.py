"""What ``--explain`` and history recording cost, as whole processes, and whether the report's
own clock says so (issue 32).

    .venv/bin/python -m bench.bench_explain_cost [--quick] [--repeats N] [--factor 10]

For each collection, four ``ragsonde eval`` processes on SciFact's test queries, in alternating
order, ``--repeats`` times: plain and ``--explain``, each with ``--no-record`` and recorded into
a history file of the run's own. Each process is timed from start to exit (wall) and its peak
resident memory read from the kernel (``wait4``); the report it saves gives its own ``seconds``.
Start-up is ``ragsonde --version`` (interpreter and imports). The collections: ``scifact_hybrid``
(all of SciFact, dense + BM25; built once under ``.ragsonde-bench/``) and a copy with ``--factor``
× as many points, the real ones plus synthetic distractors (each real chunk's vector turned by
noise, its text and BM25 vector kept, under a new document id), to show how the cost grows with
the corpus. Targets: explain ≤ 2 × the plain eval's wall and ≤ 1.5 × its peak memory; recording
≤ 5 % of the eval; the report's seconds within 5 % of the wall less start-up. Writes
``bench/results/explain_cost.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench._common import (
    BENCH_HOME,
    SCIFACT,
    SCIFACT_HYBRID,
    ensure_collection,
    print_table,
    require_scifact,
    write_results,
)

VARIANTS = {
    "plain": ["--no-record"],
    "explain": ["--explain", "--no-record"],
    "plain+record": [],
    "explain+record": ["--explain"],
}
TARGETS = {"explain_wall": 2.0, "explain_peak": 1.5, "record_share": 0.05, "clock": 0.05}


#: Runs a command from a small process and prints its peak memory: a child forked straight from
#: this one would count this process's own memory in its peak (Linux keeps the high-water mark
#: of the image it forked from across exec).
_LAUNCH = (
    "import json, os, subprocess, sys\n"
    "p = subprocess.Popen(json.loads(sys.argv[1]), stdout=subprocess.DEVNULL,"
    " stderr=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "print(json.dumps([usage.ru_maxrss, os.waitstatus_to_exitcode(status)]))\n"
)


def _process(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, peak resident MB and exit code of one process."""
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _LAUNCH, json.dumps(cmd)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    wall = time.perf_counter() - t0
    peak_kb, code = json.loads(out)
    return wall, peak_kb / 1024, int(code)


def build_distractors(home: Path, source: str, target: str, factor: int) -> float:
    """``target``: ``source``'s points plus ``factor - 1`` noisy copies of each under new
    document ids (not embedded: vectors turned by noise). Seconds spent; 0 when it exists."""
    import numpy as np

    from ragsonde.config import Settings
    from ragsonde.models.points import PointRecord
    from ragsonde.store import open_store

    settings = Settings(home=home)
    store = open_store(settings)
    try:
        if target in store.list_collections():
            return 0.0
        t0 = time.perf_counter()
        info = store.collection_info(source)
        store.create_collection(
            target,
            info.dimension,
            vector_name=info.vector_name,
            sparse_vector_name=info.sparse_vector_name,
            indexed_fields=dict(info.indexed_fields),
            distance=info.distance,
        )
        rng = np.random.default_rng(0)
        for batch in store.scroll(source, batch_size=256, with_vectors=True):
            out: list[PointRecord] = []
            for rec in batch:
                out.append(rec)
                base = np.asarray(rec.vector, dtype=np.float32)
                for i in range(1, factor):
                    v = base + rng.normal(0, 0.35, base.shape).astype(np.float32)
                    v /= np.linalg.norm(v)
                    payload = {
                        **rec.payload,
                        "doc_id": f"distractor-{i}-{rec.payload.get('doc_id')}",
                    }
                    pid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{rec.id}/{i}"))
                    out.append(PointRecord(pid, v.tolist(), payload, rec.sparse))
            store.upsert(target, out)
        store.build_index(target)
        return round(time.perf_counter() - t0, 1)
    finally:
        store.close()


def measure(collection: str, repeats: int, workdir: Path) -> dict[str, Any]:
    env = {**os.environ, "RAGSONDE_HOME": str(BENCH_HOME), "RAGSONDE_COLLECTION": collection}
    ragsonde = [sys.executable, "-m", "ragsonde"]
    startup = statistics.median(_process([*ragsonde, "--version"], env)[0] for _ in range(3))
    runs: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
    for r in range(repeats):
        order = list(VARIANTS) if r % 2 == 0 else list(reversed(VARIANTS))
        for variant in order:
            saved = workdir / f"{collection}-{variant}-{r}.json"
            history = workdir / f"{collection}-{variant}-{r}.sqlite"
            cmd = [*ragsonde, "eval", str(SCIFACT), "-c", collection, "--save", str(saved)]
            cmd += ["--history", str(history), *VARIANTS[variant]]
            wall, peak, code = _process(cmd, env)
            if code not in (0, 1):
                raise SystemExit(f"{' '.join(cmd)} exited {code}")
            seconds = float(json.loads(saved.read_text(encoding="utf-8"))["seconds"])
            runs[variant].append({"wall_s": wall, "peak_mb": peak, "seconds": seconds})
            print(f"  {collection} {variant}: {wall:.1f} s wall, {peak:.0f} MB, report {seconds} s")
    med = {v: {k: statistics.median(x[k] for x in xs) for k in xs[0]} for v, xs in runs.items()}
    plain, explain = med["plain"], med["explain"]
    return {
        "collection": collection,
        "startup_s": round(startup, 2),
        "runs": runs,
        "median": med,
        "explain_wall_ratio": round(explain["wall_s"] / plain["wall_s"], 3),
        "explain_peak_ratio": round(explain["peak_mb"] / plain["peak_mb"], 3),
        "record_share_plain": round(med["plain+record"]["wall_s"] / plain["wall_s"] - 1, 4),
        "record_share_explain": round(med["explain+record"]["wall_s"] / explain["wall_s"] - 1, 4),
        "clock_error": {
            v: round(m["seconds"] / (m["wall_s"] - startup) - 1, 4) for v, m in med.items()
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=2, help="processes per variant (median)")
    ap.add_argument("--factor", type=int, default=10, help="the large corpus: × this many points")
    ap.add_argument("--no-large", action="store_true", help="SciFact alone, no distractor copy")
    args = ap.parse_args()
    require_scifact()
    from ragsonde.config import Settings
    from ragsonde.embedders import get_embedder

    settings = Settings(home=BENCH_HOME, collection=SCIFACT_HYBRID)
    ensure_collection(settings, get_embedder(settings), SCIFACT)
    collections = [SCIFACT_HYBRID]
    if not args.no_large:
        large = f"{SCIFACT_HYBRID}_x{args.factor}"
        built = build_distractors(BENCH_HOME, SCIFACT_HYBRID, large, args.factor)
        if built:
            print(f"built {large} in {built:.0f} s")
        collections.append(large)
    with tempfile.TemporaryDirectory() as tmp:
        results = [measure(c, args.repeats, Path(tmp)) for c in collections]
    print_table(
        "eval --explain and history recording as whole processes (SciFact test, dense)",
        ["figure", *collections, "target"],
        [
            ["explain / plain, wall", *(r["explain_wall_ratio"] for r in results), "≤ 2"],
            ["explain / plain, peak memory", *(r["explain_peak_ratio"] for r in results), "≤ 1.5"],
            [
                "recording, share of plain eval",
                *(r["record_share_plain"] for r in results),
                "≤ 0.05",
            ],
            [
                "recording, share of explain",
                *(r["record_share_explain"] for r in results),
                "≤ 0.05",
            ],
            *[
                [
                    f"report seconds / (wall - start-up) - 1, {v}",
                    *(r["clock_error"][v] for r in results),
                    "±0.05",
                ]
                for v in VARIANTS
            ],
        ],
    )
    data = {"date": time.strftime("%Y-%m-%d %H:%M"), "targets": TARGETS, "results": results}
    print(f"wrote {write_results('explain_cost', data, quick=False)}")


if __name__ == "__main__":
    main()
