"""Score-threshold calibration: what a ``score_threshold`` would keep and lose, on a benchmark.

For each threshold t in [0, 1], a query returns the documents of its ranking whose similarity
score is ≥ t. Per threshold: mean precision (over the queries that still return something), mean
recall, mean per-query F1 (0 for a query left with nothing), and the share of queries left with
no result. Two recommendations: the threshold with the best F1, and the highest threshold whose
recall stays within ``max_recall_loss`` of the recall with no threshold.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ragsonde.evaluate.report import SweepRow, ThresholdSweep

__all__ = ["sweep_thresholds"]

DEFAULT_THRESHOLDS = tuple(round(x, 2) for x in np.linspace(0.0, 1.0, 41))


def _row(
    t: float, run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, int]]
) -> dict[str, float]:
    precisions, recalls, f1s, empty = [], [], [], 0
    for qid, relevant in qrels.items():
        kept = {d for d, s in run.get(qid, {}).items() if min(1.0, max(0.0, s)) >= t}
        rel = {d for d, g in relevant.items() if g > 0}
        hits = len(kept & rel)
        recall = hits / len(rel) if rel else 0.0
        recalls.append(recall)
        if not kept:
            empty += 1
            f1s.append(0.0)
            continue
        precision = hits / len(kept)
        precisions.append(precision)
        f1s.append(2 * precision * recall / (precision + recall) if hits else 0.0)
    n = max(len(qrels), 1)
    return {
        "threshold": t,
        "precision": float(np.mean(precisions)) if precisions else 0.0,
        "recall": sum(recalls) / n,
        "f1": sum(f1s) / n,
        "no_result_share": empty / n,
    }


def sweep_thresholds(
    run: Mapping[str, Mapping[str, float]],
    qrels: Mapping[str, Mapping[str, int]],
    *,
    thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
    max_recall_loss: float = 0.05,
) -> ThresholdSweep:
    """The sweep table and the two recommended thresholds (see the module docstring)."""
    rows = [_row(float(t), run, qrels) for t in thresholds]
    best = max(rows, key=lambda r: (r["f1"], r["threshold"]))
    floor = rows[0]["recall"] * (1.0 - max_recall_loss)
    keeping = [r for r in rows if r["recall"] >= floor - 1e-12]
    safe = max(keeping, key=lambda r: r["threshold"]) if keeping else rows[0]
    return ThresholdSweep(
        rows=[SweepRow.model_validate(r) for r in rows],
        best_f1=SweepRow.model_validate(best),
        max_recall_loss=max_recall_loss,
        recall_preserving=SweepRow.model_validate(safe),
        recommended_setting=f"score_threshold={safe['threshold']:g}",
    )
