"""A verdict with error bars: metrics estimated from a few judged queries and many predicted
ones by prediction-powered inference (PPI++), unbiased whatever the predictions' quality.

>>> from ragsonde.estimate import estimate_metric                           # doctest: +SKIP
>>> est = estimate_metric(gold_ndcg, all_query_ids, predictions)            # doctest: +SKIP
>>> est.method, est.low, est.high, est.classical.low, est.classical.high    # doctest: +SKIP

The statistics: :mod:`ragsonde.estimate.ppi`; fitting signals to the labelled queries:
:mod:`ragsonde.estimate.crossfit`; choosing the method: :mod:`ragsonde.estimate.estimate`.
"""

from __future__ import annotations

from ragsonde.estimate.crossfit import CrossFit, crossfit
from ragsonde.estimate.estimate import (
    MIN_CROSSFIT,
    Features,
    estimate_difference,
    estimate_metric,
    estimate_metrics,
    features,
)
from ragsonde.estimate.ppi import (
    Interval,
    classical_mean,
    crossppi_mean,
    ppi_mean,
    regression_mean,
)
from ragsonde.estimate.predictors import ScoreSignals
from ragsonde.estimate.report import (
    comparison_predictor,
    estimate_comparison,
    estimate_paired,
    estimate_report,
    estimate_versus,
    estimating,
)
from ragsonde.models.estimate import Bounds, Method, MetricEstimate

__all__ = [
    "MIN_CROSSFIT",
    "Bounds",
    "CrossFit",
    "Features",
    "Interval",
    "Method",
    "MetricEstimate",
    "ScoreSignals",
    "classical_mean",
    "comparison_predictor",
    "crossfit",
    "crossppi_mean",
    "estimate_comparison",
    "estimate_difference",
    "estimate_metric",
    "estimate_metrics",
    "estimate_paired",
    "estimate_report",
    "estimate_versus",
    "estimating",
    "features",
    "ppi_mean",
    "regression_mean",
]
