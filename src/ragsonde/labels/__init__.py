"""Labels without a labelling team: generate a benchmark, judge it with an LLM, measure trust.

- :func:`generate`: queries sampled from a collection's own chunks (offline term sampling, or an
  LLM), each with its source document relevant.
- Labels carry provenance (:class:`Label`): human, generator or LLM, who, when.
"""

from __future__ import annotations

from ragsonde.labels.benchfile import read_entries, write_entries
from ragsonde.labels.generate import generate
from ragsonde.labels.models import (
    BenchmarkEntry,
    GenerateReport,
    JudgeReport,
    Label,
    LabelSource,
    Usage,
)

__all__ = [
    "BenchmarkEntry",
    "GenerateReport",
    "JudgeReport",
    "Label",
    "LabelSource",
    "Usage",
    "generate",
    "read_entries",
    "write_entries",
]
