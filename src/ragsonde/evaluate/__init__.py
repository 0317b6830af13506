"""Evaluation: does retrieval work? IR metrics, latency, integrity, reports and CI gates.

>>> from ragsonde.evaluate import EvalOptions, evaluate                  # doctest: +SKIP
>>> report = evaluate("scifact/", collection="scifact", options=EvalOptions(gates=["ndcg@10>=0.6"]))
>>> report.metrics["ndcg@10"], report.passed                            # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ragsonde.errors import RelevanceError
from ragsonde.evaluate.comparison import Comparison, NoRegressionGate, no_regression_gate
from ragsonde.evaluate.datasets import LOADERS, Benchmark, BenchQuery, load_benchmark
from ragsonde.evaluate.gates import Gate, parse_gate
from ragsonde.evaluate.integrity import IntegrityReport
from ragsonde.evaluate.metrics import DEFAULT_KS, METRICS, compute_metrics, parse_metric
from ragsonde.evaluate.options import EvalOptions
from ragsonde.evaluate.report import SCHEMA_VERSION, EvalReport, VersusReport, load_report
from ragsonde.evaluate.runner import evaluate
from ragsonde.progress import Progress as EvalProgress

if TYPE_CHECKING:
    from ragsonde.evaluate.against import evaluate_against

__all__ = [
    "DEFAULT_KS",
    "LOADERS",
    "METRICS",
    "SCHEMA_VERSION",
    "BenchQuery",
    "Benchmark",
    "Comparison",
    "EvalOptions",
    "EvalProgress",
    "EvalReport",
    "Gate",
    "IntegrityReport",
    "NoRegressionGate",
    "RelevanceError",
    "VersusReport",
    "compute_metrics",
    "evaluate",
    "evaluate_against",
    "load_benchmark",
    "load_report",
    "no_regression_gate",
    "parse_gate",
    "parse_metric",
]

#: Names loaded on first use (PEP 562): they pull in scipy, which costs a second at start-up,
#: and ``ragsonde history list`` (which reads ``ragsonde.evaluate.history``) needs none of it.
_LAZY = {"evaluate_against": "ragsonde.evaluate.against"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ragsonde.evaluate' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
