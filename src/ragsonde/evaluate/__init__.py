"""Evaluation: does retrieval work? IR metrics, latency, integrity, reports and CI gates.

>>> from ragsonde.evaluate import EvalOptions, evaluate                  # doctest: +SKIP
>>> report = evaluate("scifact/", EvalOptions(gates=["ndcg@10>=0.6"]), collection="scifact")
>>> report.metrics["ndcg@10"], report.passed                            # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragsonde.errors import RelevanceError
    from ragsonde.evaluate.against import evaluate_against
    from ragsonde.evaluate.comparison import Comparison, NoRegressionGate, no_regression_gate
    from ragsonde.evaluate.datasets import LOADERS, Benchmark, BenchQuery, load_benchmark
    from ragsonde.evaluate.gates import Gate, parse_gate
    from ragsonde.evaluate.integrity import IntegrityReport
    from ragsonde.evaluate.metrics import DEFAULT_KS, METRICS, compute_metrics, parse_metric
    from ragsonde.evaluate.options import EvalOptions
    from ragsonde.evaluate.report import SCHEMA_VERSION, EvalReport, VersusReport
    from ragsonde.evaluate.runner import evaluate
    from ragsonde.evaluate.saved import load_report
    from ragsonde.progress import Progress as EvalProgress

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

#: Every public name is loaded on first use (PEP 562): name -> (module, attribute). The runner
#: pulls in the retriever, the embedders and numpy, ``evaluate_against`` scipy; a room of this
#: package that needs none of them (``ragsonde history list`` reads the room
#: ``ragsonde.history`` above it) must not pay for them by importing the package.
_LAZY: dict[str, tuple[str, str]] = {
    "RelevanceError": ("ragsonde.errors", "RelevanceError"),
    "evaluate_against": ("ragsonde.evaluate.against", "evaluate_against"),
    **{
        n: ("ragsonde.evaluate.comparison", n)
        for n in ("Comparison", "NoRegressionGate", "no_regression_gate")
    },
    **{
        n: ("ragsonde.evaluate.datasets", n)
        for n in ("LOADERS", "Benchmark", "BenchQuery", "load_benchmark")
    },
    **{n: ("ragsonde.evaluate.gates", n) for n in ("Gate", "parse_gate")},
    "IntegrityReport": ("ragsonde.evaluate.integrity", "IntegrityReport"),
    **{
        n: ("ragsonde.evaluate.metrics", n)
        for n in ("DEFAULT_KS", "METRICS", "compute_metrics", "parse_metric")
    },
    "EvalOptions": ("ragsonde.evaluate.options", "EvalOptions"),
    **{
        n: ("ragsonde.evaluate.report", n) for n in ("SCHEMA_VERSION", "EvalReport", "VersusReport")
    },
    "load_report": ("ragsonde.evaluate.saved", "load_report"),
    "evaluate": ("ragsonde.evaluate.runner", "evaluate"),
    "EvalProgress": ("ragsonde.progress", "Progress"),
}


def __getattr__(name: str) -> Any:
    found = _LAZY.get(name)
    if found is None:
        raise AttributeError(f"module 'ragsonde.evaluate' has no attribute {name!r}")
    value = getattr(importlib.import_module(found[0]), found[1])
    globals()[name] = value  # once loaded, an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
