"""Where the traffic run's peak memory is set, and what of it grows with the traffic: each size
in a fresh process, ``traffic_report`` on an OTLP file of SciFact sentences (as the speed bench
writes it), with the process's peak (``VmHWM``) and resident size (``VmRSS``) read at the
boundaries of its stages (the first pass, the replay, the report's aggregates, the history
record, the JSON written), then glibc's account of its heap (``mallinfo2``: in use and free)
and the resident size after ``malloc_trim`` gives free heap pages back.

Run from the repository's root: ``python -m bench.bench_traffic_speed --memory-probe
10000,40000`` (it adds ``memory_probe`` to ``bench/results/traffic_speed.json``).
"""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _status(key: str) -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(key):
                return round(int(line.split()[1]) / 1024, 1)
    return 0.0


#: glibc's ``struct mallinfo2``, in its order.
_MALLINFO2 = (
    "arena",
    "ordblks",
    "smblks",
    "hblks",
    "hblkhd",
    "usmblks",
    "fsmblks",
    "uordblks",
    "fordblks",
    "keepcost",
)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _MALLINFO2]


def child(home: str, path: str) -> None:
    """One probed run in this process: print its marks as JSON."""
    from bench._common import SCIFACT_HYBRID
    from ragsonde.config import Settings
    from ragsonde.traffic import record, report, run
    from ragsonde.traffic.heap import release_free_memory
    from ragsonde.workspace import Workspace

    marks: list[tuple[str, float, float, float, float]] = []

    def mark(label: str) -> None:  # peak, resident, and the resident's anonymous and file parts
        marks.append(
            (label, _status("VmHWM:"), _status("VmRSS:"), _status("RssAnon:"), _status("RssFile:"))
        )

    def probed(owner: Any, name: str, label: str) -> None:
        fn: Callable[..., Any] = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            out = fn(*args, **kwargs)
            mark(label)
            return out

        setattr(owner, name, wrapper)

    probed(run, "scan_traffic", "first pass read")
    probed(run, "combination_of", "replay done")  # called right after the replay's loop
    probed(run, "analyse", "report's aggregates done (topics, drift, hash)")
    probed(record, "record_traffic", "history recorded")
    probed(report.TrafficReport, "write_json", "JSON written")
    with Workspace(Settings(home=Path(home), collection=SCIFACT_HYBRID)) as ws:
        ws.embedder.embed_queries(["warm up"])
        mark("model loaded")
        done = run.traffic_report([path], ws)
        with Path(path).with_suffix(".report.json").open("w", encoding="utf-8") as f:
            done.write_json(f)
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        heap = libc.mallinfo2()
        before = _status("VmRSS:")
        release_free_memory()
        out = {
            "marks": marks,
            "peak_rss_mib": _status("VmHWM:"),
            "heap_in_use_mib": round(heap.uordblks / 2**20, 1),
            "heap_free_mib": round(heap.fordblks / 2**20, 1),
            "rss_before_trim_mib": before,
            "rss_after_trim_mib": _status("VmRSS:"),
        }
    print(json.dumps(out))


def memory_probe(home: Path, dataset: Path, sizes: list[int]) -> dict[str, Any]:
    from bench.bench_traffic_speed import sentences, write_otlp

    texts = sentences(dataset / "corpus.jsonl", max(sizes))
    out: dict[str, Any] = {"sizes": sizes, "runs": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"t{n}.otlp.json"
            write_otlp(texts[:n], path)
            done = subprocess.run(
                [sys.executable, "-m", "bench._traffic_memory", str(home), str(path)],
                capture_output=True,
                text=True,
                check=True,
            )
            out["runs"][str(n)] = json.loads(done.stdout.strip().splitlines()[-1])
            print(json.dumps({n: out["runs"][str(n)]}))
    return out


def _cell(mark: list[Any]) -> str:
    cell = f"{mark[1]:.1f} / {mark[2]:.1f}"
    return cell + (f" ({mark[3]:.1f} + {mark[4]:.1f})" if len(mark) > 3 else "")


def memory_probe_lines(d: dict[str, Any]) -> list[str]:
    """The RESULTS.md table of ``memory_probe``."""
    runs = d["runs"]
    sizes = [str(n) for n in d["sizes"]]
    labels = [label for label, *_ in runs[sizes[0]]["marks"]]
    out = [
        "Where the peak is set (`python -m bench.bench_traffic_speed --memory-probe "
        f"{','.join(sizes)}`, each size a fresh process; peak so far / resident, MiB, at the end "
        "of each stage; then the resident's anonymous + file-backed parts, the latter mostly "
        "the store's memory-mapped segments and the libraries):",
        "",
        "| stage | " + " | ".join(f"{int(n):,} queries" for n in sizes) + " |",
        "|---|" + "---|" * len(sizes),
    ]
    for i, label in enumerate(labels):
        cells = [_cell(runs[n]["marks"][i]) for n in sizes]
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append(
        "| heap in use / free (glibc), resident after `malloc_trim` | "
        + " | ".join(
            f"{runs[n]['heap_in_use_mib']:.1f} / {runs[n]['heap_free_mib']:.1f}, "
            f"{runs[n]['rss_after_trim_mib']:.1f}"
            for n in sizes
        )
        + " |"
    )
    return out


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2])
