"""Labels without a labelling team: generate a benchmark, judge it with an LLM, measure trust.

- :func:`generate`: queries sampled across a collection's chunks (stratified by document and
  section): offline (by default ICT: a sentence of the chunk, removed from it in a copy), or LLM
  questions that are then pooled and judged.
- Every generated benchmark carries its lexical leakage (:mod:`.leakage`); ``--method ict``
  (:mod:`.ict`) is evaluated on a copy of the collection without the query sentences.
- ``--llm local:NAME`` runs a GGUF model through llama.cpp's own server on loopback
  (:mod:`.local`), its sha256 checked, through the same client as any OpenAI-compatible API.
- :func:`judge`: an LLM grades each query's pooled, unjudged hits 0–3 (UMBRELA-style prompt),
  cached, counted and within a budget; :func:`agreement` gives Cohen's kappa and the confusion
  per grade against humans, :func:`position_bias` how often a grade moves with the order.
- Every label carries its provenance (:class:`Label`): human, generator or LLM, who, when.
"""

from __future__ import annotations

from ragsonde.labels.agreement import agreement, position_bias
from ragsonde.labels.benchfile import read_entries, write_entries
from ragsonde.labels.chat import Budget, ChatClient, Price
from ragsonde.labels.generate import GenerateOptions, generate
from ragsonde.labels.judge import JudgeOptions, judge
from ragsonde.labels.models import (
    Agreement,
    BenchmarkEntry,
    GenerateReport,
    JudgeReport,
    Label,
    LabelSource,
    Leakage,
    PositionBias,
    Usage,
)

__all__ = [
    "Agreement",
    "BenchmarkEntry",
    "Budget",
    "ChatClient",
    "GenerateOptions",
    "GenerateReport",
    "JudgeOptions",
    "JudgeReport",
    "Label",
    "LabelSource",
    "Leakage",
    "PositionBias",
    "Price",
    "Usage",
    "agreement",
    "generate",
    "judge",
    "position_bias",
    "read_entries",
    "write_entries",
]
