"""Naming runs, and the baseline a new run is gated against.

A run is named by its id (``12``), ``last`` (``last~1`` the one before), or ``best`` (the
highest ``ndcg@10``, or the metric named). ``eval --baseline`` takes those, restricted to runs
of the same benchmark (queries and labels), or an exported ``FILE.jsonl`` (``history export``)
whose newest run of the same benchmark is the baseline.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ValidationError

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.comparison import DEFAULT_GATE_METRIC
from ragsonde.evaluate.report import EvalReport
from ragsonde.history.models import Fingerprint, RunSummary
from ragsonde.history.store import HistoryStore, RecordedRun
from ragsonde.models.text import loads_json

if TYPE_CHECKING:
    from ragsonde.history.diff import Paired
    from ragsonde.history.models import RunDiff

__all__ = [
    "against_baseline",
    "check_baseline",
    "load_exported",
    "resolve_baseline",
    "resolve_run",
]

#: Run ids are SQLite integers (at most 2**63 - 1: 19 digits).
_MAX_ID_DIGITS = 18


def resolve_run(
    hs: HistoryStore,
    ref: str,
    *,
    benchmark_sha256: str | None = None,
    metric: str = DEFAULT_GATE_METRIC,
    exclude: int | None = None,
) -> int:
    """The id ``ref`` names (``12``, ``last``, ``last~N``, ``best``); ``benchmark_sha256``
    restricts ``last``/``best`` to runs of that benchmark; ``exclude`` is never chosen."""
    ref = ref.strip()
    if ref.isascii() and ref.isdigit():
        if len(ref) > _MAX_ID_DIGITS:  # past SQLite's integers: no such run
            raise QueryValidationError(f"no run {ref[:20]}… in history {hs.path}.", field="run")
        hs.summary(int(ref))  # a VALIDATION_ERROR when there is none
        return int(ref)
    ids = [i for i in hs.ids(benchmark_sha256=benchmark_sha256) if i != exclude]
    scope = " of this benchmark" if benchmark_sha256 else ""
    if ref == "best":
        best = hs.best(metric, benchmark_sha256=benchmark_sha256)
        if best is not None and best != exclude:
            return best
        ranked = [(s.metrics.get(metric, float("-inf")), -s.run_id) for s in _summaries(hs, ids)]
        if ranked:
            return -max(ranked)[1]
    elif ref == "last" or ref.startswith("last~"):
        back = ref.partition("~")[2] or "0"
        if not back.isdigit():
            raise QueryValidationError(f"bad run {ref!r}: write last~N.", field="run")
        if int(back) < len(ids):
            return ids[-1 - int(back)]
    else:
        raise QueryValidationError(
            f"bad run {ref!r}: give a run id, last, last~N or best.", field="run"
        )
    raise QueryValidationError(
        f"no run {ref!r}{scope} in history {hs.path}; `ragsonde history list` shows the runs.",
        field="run",
    )


def _summaries(hs: HistoryStore, ids: list[int]) -> list[RunSummary]:
    return [hs.summary(i) for i in ids]


def _a_file(spec: str) -> bool:
    """Whether ``spec`` names a file rather than a run: any path there but a folder (a FIFO or
    a device was taken for a run id, "bad run '/dev/zero'")."""
    path = Path(spec)
    return path.is_symlink() or (path.exists() and not path.is_dir())


def load_exported(path: Path, benchmark_sha256: str | None = None) -> RecordedRun:
    """The newest run in an exported JSONL file (of ``benchmark_sha256`` when given)."""
    chosen: dict[str, object] | None = None
    # said plainly: they were "[Errno 21] …" and "'utf-8' codec can't decode byte 0xff …"
    if path.is_dir():
        raise QueryValidationError(
            f"cannot read baseline {path}: it is a folder, not a file", field="baseline"
        )
    from ragsonde.inputs import MAX_DOCUMENT_BYTES, text_lines

    # a FIFO or a device refused, not waited on or read for ever; a line is a whole report
    try:
        lines = [text.rstrip("\r\n") for _, text in text_lines(path, MAX_DOCUMENT_BYTES)]
    except ValueError as e:  # not a file, a line over the limit, binary data, not UTF-8
        raise QueryValidationError(f"cannot read baseline {path}: {e}", field="baseline") from e
    if lines and lines[0].strip() == "{":  # an indented JSON document: a saved eval report?
        raise QueryValidationError(
            f"{path} is one JSON document over several lines (a report saved with `eval "
            "--save`?); --baseline takes a recorded run (an id, last, best) or a file of "
            "`ragsonde history export`, one run a line.",
            field="baseline",
        )
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            run = loads_json(line)
            fp = Fingerprint.model_validate(run["fingerprint"])
        except (ValueError, KeyError, TypeError, ValidationError) as e:
            raise QueryValidationError(
                f"{path}:{n} is not a run exported by `ragsonde history export` ({e}).",
                field="baseline",
            ) from e
        if benchmark_sha256 is None or fp.benchmark.sha256 == benchmark_sha256:
            chosen = run
    if chosen is None:
        raise QueryValidationError(
            f"{path} holds no run of this benchmark (same queries and labels); export one "
            "with `ragsonde history export` after an eval of it.",
            field="baseline",
        )
    fingerprint = Fingerprint.model_validate(chosen["fingerprint"])
    report = EvalReport.model_validate(chosen["report"])
    summary = RunSummary(
        run_id=int(str(chosen.get("run_id", 0))),
        created_at=report.created_at,
        dataset=report.dataset,
        benchmark=fingerprint.benchmark.name,
        benchmark_sha256=fingerprint.benchmark.sha256,
        collection=report.collection,
        embedder=report.embedder,
        n_queries=report.n_queries,
        passed=report.passed,
        gates=len(report.gates),
        seconds=report.seconds,
        metrics=report.metrics,
    )
    return RecordedRun(summary, fingerprint, report)


def resolve_baseline(
    spec: str,
    history: Path,
    benchmark_sha256: str,
    *,
    metric: str = DEFAULT_GATE_METRIC,
    exclude: int | None = None,
) -> RecordedRun:
    """The baseline ``spec`` names: ``FILE.jsonl``, or a run of ``history`` (same benchmark for
    ``last``/``best``; a run id of another benchmark is refused)."""
    if spec.endswith(".jsonl") or _a_file(spec):
        return load_exported(Path(spec), benchmark_sha256)
    with HistoryStore(history) as hs:
        run_id = resolve_run(
            hs, spec, benchmark_sha256=benchmark_sha256, metric=metric, exclude=exclude
        )
        run = hs.get(run_id)
    if run.fingerprint.benchmark.sha256 != benchmark_sha256:
        raise QueryValidationError(
            f"baseline run {run_id} is on another benchmark (its queries or labels differ): "
            "a gate compares like for like only. Name a run of this benchmark, or `last`.",
            field="baseline",
        )
    return run


def against_baseline(
    run_id: int, spec: str, history: Path, *, paired: Paired | None = None
) -> tuple[RecordedRun, RunDiff]:
    """Run ``run_id`` of ``history`` against the baseline ``spec`` names (of its benchmark),
    with the no-regression gate: the baseline and the diff. ``paired``: as
    :func:`~ragsonde.history.diff.diff_runs`' (each metric's PPI++ difference where the runs
    are of a partly labelled benchmark, the gate's verdict then on its interval). ``eval
    --baseline`` and the pytest plugin's ``baseline`` both ask here."""
    from ragsonde.history.diff import diff_runs

    with HistoryStore(history) as hs:
        current = hs.get(run_id)
    base = resolve_baseline(spec, history, current.fingerprint.benchmark.sha256, exclude=run_id)
    return base, diff_runs(base, current, gate=True, paired=paired)


def check_baseline(spec: str, history: Path) -> None:
    """Refuse, before the evaluation runs, a baseline that cannot be: an exported file that is
    not one, or a run the history cannot have (a missing id; ``last``/``best`` of an empty
    history). Whether it is of the same benchmark is known after the run."""
    if spec.endswith(".jsonl") or _a_file(spec):
        load_exported(Path(spec))
        return
    with HistoryStore(history) as hs:
        resolve_run(hs, spec)
