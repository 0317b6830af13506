"""Tune Qdrant on your own collection: quantization, HNSW and fusion swept against your labels.

    >>> from ragsonde.tune import tune, TuneOptions                 # doctest: +SKIP
    >>> report = tune("scifact/", settings=Settings(collection="scifact"))
    >>> report.recommendation.config

:func:`tune` builds temporary index variants (:mod:`ragsonde.tune.variants`), searches them with
every setting of :class:`Grid`, scores them against the labels, cross-validates the choice and
returns a :class:`TuneReport`.
"""

from __future__ import annotations

from ragsonde.tune.grid import DEFAULT_GRID, Aggregation, Grid, load_grid
from ragsonde.tune.report import (
    ConfigResult,
    Constraints,
    CrossValidation,
    Recommendation,
    TuneReport,
    VariantResult,
)
from ragsonde.tune.runner import TuneOptions, TuneProgress, require_indexed, tune
from ragsonde.tune.saved import save_config

__all__ = [
    "DEFAULT_GRID",
    "Aggregation",
    "ConfigResult",
    "Constraints",
    "CrossValidation",
    "Grid",
    "Recommendation",
    "TuneOptions",
    "TuneProgress",
    "TuneReport",
    "VariantResult",
    "load_grid",
    "require_indexed",
    "save_config",
    "tune",
]
