"""Run history: every evaluation recorded with what it ran against; diffs, trends, baselines.

A room of its own above the evaluation's report (it stores and compares evaluation reports, and
the runner, the server and traffic record into it once a report is finished).

>>> from ragsonde.history import HistoryStore, diff_runs       # doctest: +SKIP
>>> with HistoryStore(".ragsonde/history.sqlite") as hs:
...     print(diff_runs(hs.get(1), hs.get(2)).changed_fields)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Loaded now, not lazily: the function ``trend`` has its module's name, and once the module is
# imported (by anything) the package attribute ``trend`` would be the module. It is light (the
# store and the models, what ``history list`` loads anyway).
from ragsonde.history.trend import sparkline as sparkline, trend as trend, write_svg as write_svg

if TYPE_CHECKING:  # ``_LAZY``'s names for the type checker (``X as X``: exported)
    from ragsonde.history.baseline import (
        load_exported as load_exported,
        resolve_baseline as resolve_baseline,
        resolve_run as resolve_run,
    )
    from ragsonde.history.damage import HistoryFileError as HistoryFileError
    from ragsonde.history.diff import (
        diff_runs as diff_runs,
        fingerprint_changes as fingerprint_changes,
        query_flips as query_flips,
    )
    from ragsonde.history.fingerprint import build_fingerprint as build_fingerprint
    from ragsonde.history.models import (
        ExportResult as ExportResult,
        FieldChange as FieldChange,
        Fingerprint as Fingerprint,
        FlipWhy as FlipWhy,
        PruneResult as PruneResult,
        QueryFlip as QueryFlip,
        RunDiff as RunDiff,
        RunList as RunList,
        RunShow as RunShow,
        RunSummary as RunSummary,
        Trend as Trend,
        TrendPoint as TrendPoint,
    )
    from ragsonde.history.record import (
        history_path as history_path,
        record_eval as record_eval,
        recording_on as recording_on,
    )
    from ragsonde.history.store import HistoryStore as HistoryStore, RecordedRun as RecordedRun
    from ragsonde.history.why import explain_flips as explain_flips

#: Module of this package -> the names it gives the package, loaded on first use (PEP 562):
#: ``history list`` needs the store and its models, not the fingerprint's benchmark loaders,
#: the recording's numpy or the diff's statistics. ``__all__`` is read off this.
_LAZY: dict[str, tuple[str, ...]] = {
    "baseline": ("load_exported", "resolve_baseline", "resolve_run"),
    "damage": ("HistoryFileError",),
    "diff": ("diff_runs", "fingerprint_changes", "query_flips"),
    "fingerprint": ("build_fingerprint",),
    "models": (
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
    "record": ("history_path", "record_eval", "recording_on"),
    "store": ("HistoryStore", "RecordedRun"),
    "why": ("explain_flips",),
}
_MODULE_OF = {name: module for module, names in _LAZY.items() for name in names}

__all__ = sorted([*_MODULE_OF, "sparkline", "trend", "write_svg"])


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'ragsonde.history' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
