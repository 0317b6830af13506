"""How far LLM labels agree with human ones: Cohen's kappa on the (query, item) pairs both judged.

Human benchmarks list only their relevant items (SciFact, TREC qrels), so on a query that has
human labels an item the humans did not list counts as human grade 0, the usual reading of qrels.
Kappa is computed on binary relevance (human grade ≥ 1 against LLM grade ≥ ``llm_from``: 2 by
default, the threshold UMBRELA and TREC use to binarise a 0–3 scale) with scikit-learn's
``cohen_kappa_score``; raw agreement and the confusion counts are given beside it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragsonde.labels.models import BenchmarkEntry

__all__ = ["agreement"]


def agreement(
    entries: Sequence[BenchmarkEntry], llm_from: int = 2
) -> dict[str, float | int | None]:
    """Cohen's kappa between human and LLM labels on the queries that have both."""
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
            human.append(int(h.get(item, 0) >= 1))
            llm.append(int(grade >= llm_from))
    out: dict[str, float | int | None] = {
        "queries": queries,
        "pairs": len(human),
        "llm_relevant_from": llm_from,
        "both_relevant": sum(a and b for a, b in zip(human, llm, strict=True)),
        "human_only": sum(a and not b for a, b in zip(human, llm, strict=True)),
        "llm_only": sum(b and not a for a, b in zip(human, llm, strict=True)),
        "both_not": sum(not a and not b for a, b in zip(human, llm, strict=True)),
        "raw_agreement": None,
        "kappa": None,
    }
    if human:
        from sklearn.metrics import cohen_kappa_score

        out["raw_agreement"] = round(
            sum(a == b for a, b in zip(human, llm, strict=True)) / len(human), 4
        )
        if len(set(human) | set(llm)) > 1:
            out["kappa"] = round(float(cohen_kappa_score(human, llm)), 4)
    return out
