"""Run history: every evaluation recorded with what it ran against; diffs, trends, baselines.

A room of the evaluation wing (it stores and compares evaluation reports; the runner records
into it once a report is finished, so it sits beside the report, not above the runner).

>>> from ragsonde.evaluate.history import HistoryStore, diff_runs       # doctest: +SKIP
>>> with HistoryStore(".ragsonde/history.sqlite") as hs:
...     print(diff_runs(hs.get(1), hs.get(2)).changed_fields)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragsonde.evaluate.history.baseline import load_exported, resolve_baseline, resolve_run
    from ragsonde.evaluate.history.damage import HistoryFileError
    from ragsonde.evaluate.history.diff import diff_runs, fingerprint_changes, query_flips
    from ragsonde.evaluate.history.fingerprint import build_fingerprint
    from ragsonde.evaluate.history.models import (
        ExportResult,
        FieldChange,
        Fingerprint,
        FlipWhy,
        PruneResult,
        QueryFlip,
        RunDiff,
        RunList,
        RunShow,
        RunSummary,
        Trend,
        TrendPoint,
    )
    from ragsonde.evaluate.history.record import (
        history_path,
        record_eval,
        record_misses,
        recording_on,
    )
    from ragsonde.evaluate.history.store import HistoryStore, RecordedRun
    from ragsonde.evaluate.history.why import explain_flips

# Loaded now, not lazily: the function ``trend`` has its module's name, and once the module is
# imported (by anything) the package attribute ``trend`` would be the module. It is light (the
# store and the models, what ``history list`` loads anyway).
from ragsonde.evaluate.history.trend import sparkline, trend, write_svg

__all__ = [
    "ExportResult",
    "FieldChange",
    "Fingerprint",
    "FlipWhy",
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
    "explain_flips",
    "fingerprint_changes",
    "history_path",
    "load_exported",
    "query_flips",
    "record_eval",
    "record_misses",
    "recording_on",
    "resolve_baseline",
    "resolve_run",
    "sparkline",
    "trend",
    "write_svg",
]

#: Name -> the module of this package that defines it, loaded on first use (PEP 562):
#: ``history list`` needs the store and its models, not the fingerprint's benchmark loaders,
#: the recording's numpy or the diff's statistics.
_LAZY: dict[str, str] = {
    **dict.fromkeys(("load_exported", "resolve_baseline", "resolve_run"), "baseline"),
    "HistoryFileError": "damage",
    **dict.fromkeys(("diff_runs", "fingerprint_changes", "query_flips"), "diff"),
    "build_fingerprint": "fingerprint",
    **dict.fromkeys(
        (
            "ExportResult",
            "FieldChange",
            "Fingerprint",
            "FlipWhy",
            "PruneResult",
            "QueryFlip",
            "RunDiff",
            "RunList",
            "RunShow",
            "RunSummary",
            "Trend",
            "TrendPoint",
        ),
        "models",
    ),
    **dict.fromkeys(("history_path", "record_eval", "record_misses", "recording_on"), "record"),
    **dict.fromkeys(("HistoryStore", "RecordedRun"), "store"),
    "explain_flips": "why",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragsonde.evaluate.history' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
