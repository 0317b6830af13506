"""Evaluation: does retrieval work? IR metrics, latency, integrity, reports and CI gates.

>>> from ragsonde.evaluate import evaluate, parse_gate                 # doctest: +SKIP
>>> report = evaluate("scifact/", collection="scifact", gates=[parse_gate("ndcg@10>=0.6")])
"""

from __future__ import annotations

from ragsonde.evaluate.datasets import LOADERS, Benchmark, BenchQuery, load_benchmark
from ragsonde.evaluate.gates import Gate, parse_gate
from ragsonde.evaluate.integrity import IntegrityReport
from ragsonde.evaluate.metrics import DEFAULT_KS, METRICS, compute_metrics, parse_metric
from ragsonde.evaluate.runner import EvalOptions, EvalProgress, EvalReport, evaluate

__all__ = [
    "DEFAULT_KS",
    "LOADERS",
    "METRICS",
    "BenchQuery",
    "Benchmark",
    "EvalOptions",
    "EvalProgress",
    "EvalReport",
    "Gate",
    "IntegrityReport",
    "compute_metrics",
    "evaluate",
    "load_benchmark",
    "parse_gate",
    "parse_metric",
]
