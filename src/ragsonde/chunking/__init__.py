"""Which chunking? Sweep splitters, sizes and overlaps on your documents, scored span by span.

>>> from ragsonde.chunking import sweep_chunking                                  # doctest: +SKIP
>>> report = sweep_chunking("corpora/", "questions.csv")                           # doctest: +SKIP
>>> report.recommended, report.config(report.recommended).metrics["span_iou@5"]   # doctest: +SKIP
"""

from __future__ import annotations

from ragsonde.chunking.configs import DEFAULT_GRID, ChunkingConfig, parse_configs
from ragsonde.chunking.report import ChunkingReport, ConfigResult
from ragsonde.chunking.sweep import SweepOptions, sweep_chunking
from ragsonde.ingest.splitters import SPLITTERS

__all__ = [
    "DEFAULT_GRID",
    "SPLITTERS",
    "ChunkingConfig",
    "ChunkingReport",
    "ConfigResult",
    "SweepOptions",
    "parse_configs",
    "sweep_chunking",
]
