"""The tools that read files: evaluate (a benchmark file or inline rows), explain_miss, and,
with ``--allow-write``, ingest. Paths reach them already checked against the roots."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsonde.errors import QueryValidationError
from ragsonde.mcp.models import BenchRow, EvalSummary
from ragsonde.mcp.reports import REPORT_URI, RUN_URI
from ragsonde.mcp.tools import Room

if TYPE_CHECKING:
    from ragsonde.evaluate import EvalOptions
    from ragsonde.evaluate.misses import MissesReport
    from ragsonde.evaluate.report import EvalReport, IngestSummary

__all__ = ["ProgressToClient", "explain", "ingest_path", "run_evaluation", "summary_of"]

#: Inline rows at most (a longer benchmark belongs in a file).
MAX_ROWS = 1000


class ProgressToClient:
    """The library's :class:`~ragsonde.progress.Progress`, forwarded to ``send(done, total)``
    (called from the worker thread that evaluates or ingests)."""

    def __init__(self, send: Callable[[float, float | None], None]) -> None:
        self.send = send
        self.total: int | None = None
        self.done = 0

    def start(self, total: int | None, /) -> None:
        self.total, self.done = total, 0
        self.send(0, None if total is None else float(total))

    def advance(self, n: int, /, *counts: int) -> None:
        self.done += n
        self.send(float(self.done), None if self.total is None else float(self.total))


def summary_of(report: EvalReport, report_id: str) -> EvalSummary:
    return EvalSummary(
        report_id=report_id,
        report_uri=REPORT_URI.format(report_id=report_id),
        run_uri=RUN_URI.format(report_id=report_id),
        history_run=report.history_run,
        dataset=report.dataset,
        collection=report.collection,
        embedder=report.embedder,
        queries=report.n_queries,
        metrics=report.metrics,
        metrics_ci=report.metrics_ci,
        latency=report.latency,
        passed=report.passed,
        gates={g.gate: g.passed for g in report.gates},
        errors=len(report.benchmark.errors),
        warnings=report.warnings,
        seconds=report.seconds,
    )


def _write_rows(rows: Sequence[BenchRow], folder: Path) -> Path:
    if not rows:
        raise QueryValidationError("rows: give at least one benchmark row.", field="rows")
    if len(rows) > MAX_ROWS:
        raise QueryValidationError(
            f"rows: at most {MAX_ROWS} inline rows; put a longer benchmark in a file.",
            field="rows",
        )
    path = folder / "inline.jsonl"
    with path.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row.model_dump(exclude_none=True), ensure_ascii=False) + "\n")
    return path


def run_evaluation(
    room: Room,
    benchmark: Path | Sequence[BenchRow],
    options: EvalOptions,
    collection: str | None,
    progress: ProgressToClient | None,
) -> tuple[EvalSummary, EvalReport]:
    """Evaluate the benchmark (a checked file, or inline rows) as ``ragsonde eval`` does, keep
    the report for its resource, and record it in the history only when the server may write."""
    from ragsonde.estimate import estimating
    from ragsonde.evaluate import evaluate

    with ExitStack() as stack:  # a folder for inline rows only: a file is read where it is
        path = (
            benchmark
            if isinstance(benchmark, Path)
            else _write_rows(
                benchmark,
                Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="ragsonde-mcp-"))),
            )
        )
        # inline rows' errors (a query_id twice) named the temporary file they were written to
        shown = None if isinstance(benchmark, Path) else "the inline rows"
        report = evaluate(
            path,
            collection=collection,
            options=options,
            workspace=room.workspace,
            progress=progress,
            record=room.allow_write,
            extend=estimating(options, workspace=room.workspace, shown_as=shown),
            shown_as=shown,
        )
    if not isinstance(benchmark, Path):
        report.dataset = "inline rows"
    return summary_of(report, room.reports.add(report)), report


def explain(
    room: Room, benchmark: Path, query_id: str, collection: str | None, k: int
) -> MissesReport:
    """One benchmark query's miss ladder (``ragsonde explain``)."""
    from ragsonde.explain import explain_query

    if not 1 <= k <= 1000:
        raise QueryValidationError("k: between 1 and 1000.", field="k")
    return explain_query(benchmark, query_id, collection=collection, k=k, workspace=room.workspace)


def ingest_path(
    room: Room,
    source: Path,
    collection: str | None,
    fmt: str | None,
    progress: ProgressToClient | None = None,
) -> IngestSummary:
    """Ingest a checked file or folder into ``collection`` (only with ``--allow-write``)."""
    from ragsonde.evaluate.report import IngestSummary
    from ragsonde.ingest import ingest

    report = ingest(
        str(source), collection=collection, fmt=fmt, workspace=room.workspace, progress=progress
    )
    data: dict[str, Any] = report.to_json()
    return IngestSummary.model_validate(data)
