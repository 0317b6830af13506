"""How far LLM labels agree with human ones, on the (query, item) pairs both judged: Cohen's
kappa, the confusion per grade, and how often the judge's grade moves with the order it reads
the query and the passage in (position bias).

Human benchmarks list only their relevant items (SciFact, TREC qrels), so on a query that has
human labels an item the humans did not list counts as human grade 0, the usual reading of qrels.
Kappa is computed on binary relevance (human grade ≥ 1 against LLM grade ≥ ``llm_from``: 2 by
default, the threshold UMBRELA and TREC use to binarise a 0–3 scale) with scikit-learn's
``cohen_kappa_score``; raw agreement and the confusion counts are given beside it, and the
confusion of the grades themselves (human 0–3 by LLM 0–3), since the two scales need not agree
on more than relevant or not.

:func:`benchmark_agreement` is the same report for a benchmark file as it stands (the Judge
page's): kappa and the confusion computed from the file's labels, and the position bias the
judge run that wrote the file recorded beside it (``NAME.agreement.json``,
:func:`agreement_path`), since measuring it takes the judge itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from ragsonde.errors import QueryValidationError
from ragsonde.labels.models import GRADES, Agreement, BenchmarkEntry, PositionBias

__all__ = ["agreement", "agreement_path", "benchmark_agreement", "position_bias"]


def _pairs(entries: Sequence[BenchmarkEntry]) -> tuple[int, list[int], list[int]]:
    """The queries with both kinds of labels, and the (human, LLM) grade of each LLM-graded
    item of theirs (human 0 where the humans did not list it)."""
    human: list[int] = []
    llm: list[int] = []
    queries = 0
    for e in entries:
        h = e.labelled(["human"])
        m = e.labelled(["llm"])
        if not h or not m:
            continue
        queries += 1
        for item, grade in m.items():
            human.append(h.get(item, 0))
            llm.append(grade)
    return queries, human, llm


def agreement(entries: Sequence[BenchmarkEntry], llm_from: int = 2) -> Agreement:
    """Cohen's kappa and the confusion between human and LLM labels on the queries with both."""
    queries, human_grades, llm_grades = _pairs(entries)
    human = [int(g >= 1) for g in human_grades]
    llm = [int(g >= llm_from) for g in llm_grades]
    both = list(zip(human, llm, strict=True))
    confusion = {h: dict.fromkeys(GRADES, 0) for h in GRADES}
    for h, m in zip(human_grades, llm_grades, strict=True):
        confusion[str(h)][str(m)] += 1
    raw = kappa = None
    if human:
        from sklearn.metrics import cohen_kappa_score

        raw = round(sum(a == b for a, b in both) / len(both), 4)
        if len(set(human) | set(llm)) > 1:
            kappa = round(float(cohen_kappa_score(human, llm)), 4)
    return Agreement(
        queries=queries,
        pairs=len(both),
        llm_relevant_from=llm_from,
        both_relevant=sum(a and b for a, b in both),
        human_only=sum(a and not b for a, b in both),
        llm_only=sum(b and not a for a, b in both),
        both_not=sum(not a and not b for a, b in both),
        raw_agreement=raw,
        kappa=kappa,
        confusion=confusion,
    )


def position_bias(grades: Sequence[tuple[int, int]], llm_from: int = 2) -> PositionBias:
    """How often a grade moves with the order: ``grades`` holds each pair's grade with the
    query first (the prompt's order) and with the passage first."""
    changed = [(a, b) for a, b in grades if a != b]
    return PositionBias(
        pairs=len(grades),
        changed=len(changed),
        changed_share=round(len(changed) / len(grades), 4) if grades else None,
        higher_passage_first=sum(b > a for a, b in changed),
        lower_passage_first=sum(b < a for a, b in changed),
        relevance_flipped=sum((a >= llm_from) != (b >= llm_from) for a, b in grades),
    )


def agreement_path(benchmark: Path) -> Path:
    """Where ``judge --agreement`` records its agreement report beside the benchmark it wrote:
    ``NAME.agreement.json`` for ``NAME.jsonl``."""
    return benchmark.with_name(f"{benchmark.stem}.agreement.json")


def recorded_agreement(benchmark: Path) -> Agreement | None:
    """The agreement report recorded beside ``benchmark`` (None: there is none). A file that is
    there but cannot be read as one (cut short, not JSON, not UTF-8, another shape) is a
    VALIDATION_ERROR naming it: its threshold and position bias are never quietly dropped."""
    path = agreement_path(benchmark)
    if not path.exists():
        return None
    from ragsonde.models.text import read_json_file
    from ragsonde.models.validation import every_error

    try:
        return Agreement.model_validate(read_json_file(path))
    except ValueError as e:  # pydantic's ValidationError is one
        why = every_error(e) if isinstance(e, ValidationError) else e
        raise QueryValidationError(
            f"Cannot read the agreement report {path}: {why}. It is written by `ragsonde judge "
            "--agreement`: run that again, or delete the file to show the agreement without "
            "the judge run's position bias.",
            field="agreement",
        ) from e


def benchmark_agreement(benchmark: Path, entries: Sequence[BenchmarkEntry]) -> Agreement | None:
    """The LLM labels of ``benchmark`` (its ``entries``, as read) against its human labels,
    on the queries that have both (None when none has): kappa and the confusion from the labels
    as they stand (grades a person added since the judge ran count), at the threshold and with
    the position bias of the judge run recorded beside it (:func:`agreement_path`), if any."""
    recorded = recorded_agreement(benchmark)
    found = agreement(entries, recorded.llm_relevant_from if recorded else 2)
    if not found.queries:
        return None
    return found.model_copy(update={"position": recorded.position if recorded else None})
