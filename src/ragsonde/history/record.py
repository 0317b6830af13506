"""Recording a finished evaluation: :func:`record_eval`, called once the report is built.

Where: ``history`` (``--history PATH``), else ``RAGSONDE_HISTORY``, else
``<home>/history.sqlite``. Whether: ``record`` (``--no-record`` is ``False``), else
``RAGSONDE_RECORD`` (``0``/``false``/``no``/``off`` turn it off), else on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsonde.errors import QueryValidationError
from ragsonde.history.store import HistoryStore

if TYPE_CHECKING:  # what recording needs is loaded when it records (``trend`` reads this too)
    from ragsonde.evaluate.datasets import Benchmark
    from ragsonde.evaluate.report import EvalReport

__all__ = [
    "BAND_CONFIDENCE",
    "ENV_HISTORY",
    "ENV_RECORD",
    "confidence_bands",
    "history_path",
    "record_eval",
    "recording_on",
]

ENV_HISTORY = "RAGSONDE_HISTORY"
ENV_RECORD = "RAGSONDE_RECORD"
#: The confidence of the per-run bands ``history trend`` draws (percentile bootstrap).
BAND_CONFIDENCE = 0.95
_BAND_RESAMPLES = 1000
_OFF = {"0", "false", "no", "off"}
_ON = {"1", "true", "yes", "on", ""}


def history_path(home: Path | str, history: Path | str | None = None) -> Path:
    """The history file: ``history``, else ``RAGSONDE_HISTORY``, else ``<home>/history.sqlite``."""
    chosen = history or os.environ.get(ENV_HISTORY)
    return Path(chosen) if chosen else Path(home) / "history.sqlite"


def recording_on(record: bool | None = None) -> bool:
    """``record`` when given, else ``RAGSONDE_RECORD`` (default on)."""
    if record is not None:
        return record
    value = os.environ.get(ENV_RECORD, "").strip().lower()
    if value in _OFF:
        return False
    if value in _ON:
        return True
    raise QueryValidationError(
        f"{ENV_RECORD}={value!r}: say 1 or 0 (true/false, on/off).", field="record"
    )


def confidence_bands(
    report: EvalReport, confidence: float = BAND_CONFIDENCE, seed: int = 0
) -> dict[str, tuple[float, float]]:
    """Metric -> percentile-bootstrap interval of its mean over the report's scored queries
    (the same resampled query sets for every metric; an estimated run's unlabelled rows carry
    no metric and are left out, as its means leave them out)."""
    import numpy as np

    rows = [r for r in report.per_query.values() if r.metrics]
    if not rows:
        return {}
    idx = np.random.default_rng(seed).integers(0, len(rows), size=(_BAND_RESAMPLES, len(rows)))
    tail = (1 - confidence) / 2 * 100
    out: dict[str, tuple[float, float]] = {}
    for name, mean in report.metrics.items():
        values = np.asarray([r.metrics.get(name, np.nan) for r in rows], dtype=np.float64)
        if np.isnan(values).any():
            out[name] = (mean, mean)
            continue
        means = values[idx].mean(axis=1)
        low, high = np.percentile(means, [tail, 100 - tail])
        out[name] = (round(float(low), 6), round(float(high), 6))
    return out


def record_eval(
    report: EvalReport,
    bench: Benchmark,
    *,
    store: Any,
    embedder: Any,
    settings: Any,
    history: Path | str | None = None,
    bands: Mapping[str, tuple[float, float]] | None = None,
) -> int:
    """Record ``report`` (a run of ``bench`` through ``store`` and ``embedder``) with its
    fingerprint; the run's id in the history."""
    from ragsonde.history.fingerprint import build_fingerprint

    path = history_path(settings.home, history)
    with HistoryStore(path) as hs:
        fingerprint = build_fingerprint(
            report,
            bench,
            store=store,
            embedder=embedder,
            hash_file=hs.file_sha256,
        )
        return hs.record(report, fingerprint, bands or confidence_bands(report))
