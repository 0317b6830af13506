"""An estimate's gold is a person's labels; an LLM judge's labels enter only on the prediction
side (the rows are read by :mod:`ragsonde.evaluate.label_sources`).

A ragsonde row may carry ``labels`` with their provenance (``ragsonde judge`` writes them:
``source`` human, generator or llm). Its ``relevant`` mixes the sources the judge run was told
to ``use``, LLM grades included by default. An estimate (``eval --estimate``) must not take a
judge's labels as gold, or its interval would rest on the machine it is meant to check: so on
that path a row with LLM labels is scored by its other labels alone (a row labelled by the LLM
only is then unlabelled; a row only machines labelled is left out of gold by its
``machine_labels`` mark), and :func:`judge_labels` hands the LLM's grades to the ``judge``
predictor (:mod:`ragsonde.estimate.predictors`), which scores each query under them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ragsonde.evaluate.datasets import Benchmark, _own_rows
from ragsonde.evaluate.label_sources import LLM, grades, provenance

__all__ = ["JudgeLabels", "gold_only", "judge_labels"]


def _labels(rows: Iterable[Any]) -> Iterable[tuple[str, list[dict[str, Any]]]]:
    """Each row's query id (as the reader gives it) and its provenance labels."""
    for n, row in enumerate(rows, start=1):
        if isinstance(row, dict) and isinstance(row.get("labels"), list):
            yield str(row.get("query_id", n)), provenance(row)


def gold_only(bench: Benchmark, rows: Iterable[Any]) -> Benchmark:
    """``bench`` with each row that carries LLM labels scored by its other labels alone."""
    gold: dict[str, dict[str, int]] = {}
    for qid, labels in _labels(rows):
        if any(lab.get("source") == LLM for lab in labels):
            kept = grades(lab for lab in labels if lab.get("source") != LLM)
            gold[qid] = {item: g for item, g in kept.items() if g >= 1}
    if not gold:
        return bench
    queries = [replace(q, relevant=gold[q.query_id]) if q.query_id in gold else q
               for q in bench.queries]  # fmt: skip
    return replace(bench, queries=queries)


@dataclass(frozen=True)
class JudgeLabels:
    """An LLM judge's grades per query (item -> best grade), and which judges gave them."""

    grades: dict[str, dict[str, int]]
    judges: list[str]


def judge_labels(path: str | Path) -> JudgeLabels:
    """The LLM labels of a ragsonde benchmark file (none for other formats)."""
    p = Path(path)
    if not p.is_file() or p.suffix not in {".jsonl", ".yaml", ".yml", ".json"}:
        return JudgeLabels({}, [])
    per_query: dict[str, dict[str, int]] = {}
    judges: list[str] = []
    for qid, labels in _labels(_own_rows(p)):
        llm = [lab for lab in labels if lab.get("source") == LLM]
        if llm:
            per_query[qid] = grades(llm)
            judges += [str(lab.get("judge")) for lab in llm if lab.get("judge")]
    return JudgeLabels(per_query, list(dict.fromkeys(judges)))
