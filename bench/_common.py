"""Small helpers shared by the bench scripts: statistics, machine info, results, tables.

The scripts are modules of the ``bench`` package, run from the repository's root as
``python -m bench.bench_<name>``; they import this one as ``bench._common``. Importing it has no
side effects and reads no option: each script parses its own command line in its ``main()``.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]

#: The shared benchmark data (read in place, never copied): ``RAGSONDE_DATA`` if set, else the
#: ``shared/data`` folder beside the checkout (``../shared/data``).
DATA = Path(os.environ.get("RAGSONDE_DATA") or ROOT.parent / "shared" / "data")
SCIFACT = DATA / "scifact"
#: The benches' own ragsonde home (git-ignored): collections built once and reused across scripts.
#: ``RAGSONDE_BENCH_HOME`` moves it (an embedded collection is held by one process at a time, so
#: two benches at once each need a home of their own).
BENCH_HOME = Path(os.environ.get("RAGSONDE_BENCH_HOME") or ROOT / ".ragsonde-bench")
#: All of SciFact, default chunker, dense + BM25: built by whichever of ``bench_tune.py`` and
#: ``bench_labels.py`` runs first, reused by the other.
SCIFACT_HYBRID = "scifact_hybrid"

#: Where results go: ``bench/results/`` for full runs (committed, read by RESULTS.md);
#: ``--quick`` runs go to ``bench/results/quick/`` (git-ignored) so a smoke run never overwrites
#: the full figures. ``RAGSONDE_BENCH_RESULTS`` overrides both.
RESULTS_ENV = "RAGSONDE_BENCH_RESULTS"


def results_dir(quick: bool) -> Path:
    """The folder results go to: ``bench/results/``, ``bench/results/quick/`` for a ``--quick``
    run, or ``RAGSONDE_BENCH_RESULTS`` when set."""
    override = os.environ.get(RESULTS_ENV)
    if override:
        return Path(override)
    return ROOT / "bench" / "results" / ("quick" if quick else "")


def require_scifact() -> Path:
    """The SciFact folder; stop the script with a clear message when it is absent.

    Called from the ``main`` of each script that reads SciFact, after its arguments are parsed
    (so ``--help`` works anywhere), never at import: importing this module has no side effects.
    """
    if not (SCIFACT / "corpus.jsonl").is_file():
        raise SystemExit(
            f"SciFact not found at {SCIFACT}: set RAGSONDE_DATA to the shared data folder"
        )
    return SCIFACT


def ensure_collection(
    settings: Any,
    embedder: Any,
    dataset: Path,
    *,
    collection: str | None = None,
    chunk_size: int | None = None,
    store: Any = None,
) -> float:
    """Ingest ``dataset``'s BEIR corpus (dense + BM25 vectors) unless the collection exists.

    ``collection`` defaults to ``settings.collection``; ``chunk_size`` None is the default chunker.
    Uses ``store`` when given (left open), else opens the settings' store for the call. Returns the
    seconds spent ingesting: 0.0 when the collection was already there and is reused as it is
    (delete it under ``BENCH_HOME`` to rebuild it).
    """
    from ragsonde.ingest import IngestOptions, ingest
    from ragsonde.store import open_store

    name = collection or settings.collection
    st = store if store is not None else open_store(settings)
    try:
        if name in st.list_collections():
            return 0.0
        t0 = time.perf_counter()
        ingest(
            str(dataset),
            fmt="beir",
            collection=name,
            settings=settings,
            store=st,
            embedder=embedder,
            options=IngestOptions(sparse=True, chunk_size=chunk_size),
        )
        return round(time.perf_counter() - t0, 1)
    finally:
        if store is None:
            st.close()


def median_of(fn: Callable[[], float], repeats: int) -> float:
    """Call ``fn`` ``repeats`` times and return the median of what it returns."""
    return float(statistics.median(fn() for _ in range(max(1, repeats))))


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, linear interpolation (NumPy's default)."""
    data = sorted(values)
    if not data:
        return float("nan")
    pos = (len(data) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(data) - 1)
    return float(data[lo] + (data[hi] - data[lo]) * (pos - lo))


def latency_summary(ms: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99 of a list of latencies in milliseconds."""
    return {"p50": percentile(ms, 50), "p95": percentile(ms, 95), "p99": percentile(ms, 99)}


def _meminfo_kib(key: str) -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def rss_mib() -> float:
    """This process's resident set size (VmRSS) in MiB, from /proc/self/status."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def peak_rss_mib() -> float:
    """This process's own peak resident set size (VmHWM) in MiB. Not ``ru_maxrss``: on Linux
    it keeps the high-water mark of the image a child was forked from across ``exec``, so a
    child started from a bench holding the model or the data measured at least the bench."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def dir_size_mib(path: Path) -> float:
    """Bytes on disk under ``path`` (allocated blocks, so sparse files count as written), MiB."""
    total = 0
    for dirpath, _dirs, files in os.walk(path):
        for f in files:
            try:
                st = os.stat(os.path.join(dirpath, f))
            except OSError:
                continue
            total += st.st_blocks * 512
    return total / (1024 * 1024)


def machine() -> dict[str, Any]:
    """Cores, memory, CPU model, Python and platform: what the figures were measured on."""
    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = _meminfo_kib("MemTotal")
    return {
        "cpus": os.cpu_count(),
        "cpu_model": cpu,
        "memory_gib": round(mem / 1024 / 1024, 1) if mem else None,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %z"),
        "load_avg_1_5_15": [round(x, 2) for x in os.getloadavg()],  # other work on the machine
    }


def module_command(module: str, *args: str) -> list[str]:
    """The command that runs bench module ``module`` (``bench.bench_store``) in a new process
    of this Python; run it with ``cwd=ROOT`` so that the ``bench`` package is importable."""
    return [sys.executable, "-m", module, *args]


def command() -> str:
    """The command line that produced the results, as a user would re-type it from the repo:
    ``python -m bench.bench_<name> …`` (paths inside the checkout written relative to it: no
    path of the machine it ran on)."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    head = ["-m", spec.name] if spec is not None else [repo_relative(sys.argv[0])]
    return " ".join([Path(sys.executable).name, *head, *(repo_relative(a) for a in sys.argv[1:])])


def repo_relative(arg: str) -> str:
    """``arg`` relative to the repository when it is a path inside it (``bench/x.py``)."""
    try:
        return str(Path(arg).resolve().relative_to(ROOT)) if arg.startswith("/") else arg
    except ValueError:
        return arg


def write_results(name: str, data: dict[str, Any], *, quick: bool) -> Path:
    """Write ``data`` to ``<results_dir(quick)>/<name>.json`` and return the path."""
    folder = results_dir(quick)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    return path


def print_table(
    title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], caption: str | None = None
) -> None:
    """Print a Rich table; the first column is left-aligned, the rest right-aligned."""
    from rich.console import Console
    from rich.table import Table

    # Piped output (make bench | tee) would otherwise be squeezed into 80 columns.
    console = Console() if sys.stdout.isatty() else Console(width=160)
    table = Table(title=title, caption=caption)
    for i, col in enumerate(columns):
        table.add_column(col, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*("" if v is None else str(v) for v in row))
    console.print(table)


def verdict(met: bool | None) -> str:
    """``met`` / ``NOT MET`` / ``n/a`` for a target check."""
    if met is None:
        return "n/a"
    return "met" if met else "NOT MET"


def evaluate_in(
    dataset: Any,
    options: Any = None,
    *,
    settings: Any = None,
    store: Any = None,
    embedder: Any = None,
    **kwargs: Any,
) -> Any:
    """``ragsonde.evaluate.evaluate`` in a workspace of these parts, closed after (a bench
    script's own settings, store and model)."""
    from ragsonde.evaluate import evaluate
    from ragsonde.workspace import Workspace

    with Workspace(settings, store=store, embedder=embedder) as ws:
        return evaluate(dataset, options, ws, **kwargs)


#: Runs a command from a small process and prints its peak memory and CPU time: a child forked
#: straight from this one would count this process's own memory in its peak (Linux keeps the
#: high-water mark of the image it forked from across exec).
_LAUNCH = (
    "import json, os, subprocess, sys\n"
    "p = subprocess.Popen(json.loads(sys.argv[1]), stdout=subprocess.DEVNULL,"
    " stderr=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(p.pid, 0)\n"
    "print(json.dumps([usage.ru_maxrss, os.waitstatus_to_exitcode(status),"
    " usage.ru_utime + usage.ru_stime]))\n"
)


class ProcessRun(NamedTuple):
    """One process, timed from outside."""

    wall_s: float
    peak_mb: float
    code: int
    #: user + system CPU seconds: on a shared machine it moves less with the load than the wall
    cpu_s: float


def process_peak(cmd: list[str], env: dict[str, str]) -> ProcessRun:
    """Wall seconds, peak resident MB, exit code and CPU seconds of one process."""
    t0 = time.perf_counter()
    out = subprocess.run(
        [sys.executable, "-c", _LAUNCH, json.dumps(cmd)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    wall = time.perf_counter() - t0
    peak_kb, code, cpu = json.loads(out)
    return ProcessRun(wall, peak_kb / 1024, int(code), float(cpu))
