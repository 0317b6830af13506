"""Who labelled a ragsonde benchmark row: the one reader of a row's ``labels`` provenance.

``ragsonde judge`` and ``ragsonde generate`` write each label with its ``source``: ``human``
(a person, in the Judge page or a file), ``llm`` (a judge model, with its ``judge`` name) or
``generator`` (the source passage of a generated question). One rule follows from it
everywhere: gold is a person's labels. The loader marks rows only a machine labelled
(:func:`machine_source`, so a gate never passes on their raw score), the estimate path drops an
LLM's grades from gold (:func:`ragsonde.evaluate.provenance.gold_only`) and hands them to the
``judge`` predictor, and a row whose labels come from looking at hits makes the benchmark pooled
(:func:`judged`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["LLM", "check_labels", "grades", "judged", "machine_source", "provenance"]

#: The source of an LLM judge's labels.
LLM = "llm"
#: Sources that mean a hit was looked at and judged (``generator`` labels only the source).
_JUDGES = frozenset({LLM, "human"})
#: Sources that are a machine's, not a person's.
_MACHINES = frozenset({"generator", LLM})
#: Every source a label may name (``ragsonde.labels.models.LabelSource``).
_SOURCES = frozenset({"human", "generator", LLM})


def check_labels(row: dict[str, Any]) -> None:
    """ValueError naming the first of the row's ``labels`` that is not one: not an object, an
    unknown ``source``, or an item label (one with an ``id`` or a ``grade``) without a
    non-empty ``id`` and an integer ``grade`` 0-3 (a label with neither only says who labelled
    the row). Checked where the file is read, since every reader below skips what it cannot
    use: a person's label graded ``"2"`` left gold without a word, and a ``source`` spelt
    ``"LLM"`` made a judge's label a person's."""
    if "labels" not in row:
        return
    labels = row["labels"]
    if not isinstance(labels, list):
        raise ValueError("labels must be a list of {id, grade, source, judge}")
    for i, lab in enumerate(labels):
        if not isinstance(lab, dict):
            raise ValueError(f"labels[{i}] is not an object {{id, grade, source, judge}}")
        source = lab.get("source")
        if source not in _SOURCES:
            raise ValueError(
                f"labels[{i}]: source must be one of {', '.join(sorted(_SOURCES))}, not {source!r}"
            )
        if "id" not in lab and "grade" not in lab:
            continue
        item, grade = lab.get("id"), lab.get("grade")
        if not isinstance(item, str) or not item:
            raise ValueError(f"labels[{i}]: id must be a non-empty string, not {item!r}")
        if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= 3:
            raise ValueError(f"labels[{i}]: grade must be an integer 0 to 3, not {grade!r}")


def provenance(row: dict[str, Any]) -> list[dict[str, Any]]:
    """The row's well-formed provenance labels (none when it has no ``labels`` list)."""
    labels = row.get("labels")
    if not isinstance(labels, list):
        return []
    return [lab for lab in labels if isinstance(lab, dict)]


def grades(labels: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Item -> best grade of ``labels`` (malformed ones skipped)."""
    out: dict[str, int] = {}
    for lab in labels:
        item, grade = lab.get("id"), lab.get("grade")
        if isinstance(item, str) and isinstance(grade, int) and not isinstance(grade, bool):
            out[item] = max(out.get(item, 0), grade)
    return out


def machine_source(row: dict[str, Any]) -> str | None:
    """``source:judge`` of a row labelled by a machine alone (its labels carry no person's, or
    it has none and a ``generator`` wrote it); None when a person labelled it."""
    labels = provenance(row)
    if not labels:
        return f"generator:{row['generator']}" if row.get("generator") else None
    if any(lab.get("source") not in _MACHINES for lab in labels):
        return None
    return f"{labels[0]['source']}:{labels[0].get('judge', '?')}"


def judged(row: dict[str, Any]) -> bool:
    """Whether the row's labels come from judging hits (a pool), not only from its source."""
    rel = row.get("relevant")
    if isinstance(rel, dict) and any(v == 0 for v in rel.values()):
        return True
    return any(lab.get("source") in _JUDGES for lab in provenance(row))
