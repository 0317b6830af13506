"""Run history: every evaluation recorded with what it ran against; diffs, trends, baselines.

A room of the evaluation wing (it stores and compares evaluation reports; the runner records
into it once a report is finished, so it sits beside the report, not above the runner).

>>> from ragsonde.evaluate.history import HistoryStore, diff_runs       # doctest: +SKIP
>>> with HistoryStore(".ragsonde/history.sqlite") as hs:
...     print(diff_runs(hs.get(1), hs.get(2)).changed_fields)
"""

from __future__ import annotations

from ragsonde.evaluate.history.baseline import load_exported, resolve_baseline, resolve_run
from ragsonde.evaluate.history.damage import HistoryFileError
from ragsonde.evaluate.history.diff import diff_runs, fingerprint_changes, query_flips
from ragsonde.evaluate.history.fingerprint import build_fingerprint
from ragsonde.evaluate.history.models import (
    ExportResult,
    FieldChange,
    Fingerprint,
    PruneResult,
    QueryFlip,
    RunDiff,
    RunList,
    RunShow,
    RunSummary,
    Trend,
    TrendPoint,
)
from ragsonde.evaluate.history.record import history_path, record_eval, recording_on
from ragsonde.evaluate.history.store import HistoryStore, RecordedRun
from ragsonde.evaluate.history.trend import sparkline, trend, write_svg

__all__ = [
    "ExportResult",
    "FieldChange",
    "Fingerprint",
    "HistoryFileError",
    "HistoryStore",
    "PruneResult",
    "QueryFlip",
    "RecordedRun",
    "RunDiff",
    "RunList",
    "RunShow",
    "RunSummary",
    "Trend",
    "TrendPoint",
    "build_fingerprint",
    "diff_runs",
    "fingerprint_changes",
    "history_path",
    "load_exported",
    "query_flips",
    "record_eval",
    "recording_on",
    "resolve_baseline",
    "resolve_run",
    "sparkline",
    "trend",
    "write_svg",
]
