"""Which chunking: the best on the primary metric, each configuration tested against it, the
recommendation, and the warnings a reader needs (too short a corpus, noise, truncated chunks)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragsonde.chunking.report import ConfigResult
from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.compare import paired_comparison

__all__ = ["Verdict", "judge"]

#: A corpus where at least this share of documents is one chunk, under most configurations, is
#: too short for chunking to matter.
SHORT_CORPUS = 0.5


@dataclass(frozen=True)
class Verdict:
    results: list[ConfigResult]
    best: str
    recommended: str
    text: str


def judge(
    results: Sequence[ConfigResult],
    metric: str,
    alpha: float,
    window: int | None,
    warnings: list[str],
) -> Verdict:
    """Test every configuration against the best on ``metric`` (paired: the same questions);
    recommend the one with the fewest points that is not significantly worse. Appends the
    warnings to ``warnings``."""
    if any(metric not in r.metrics for r in results):
        names = ", ".join(results[0].metrics) if results else ""
        raise QueryValidationError(
            f"Unknown metric {metric!r} to rank by; the sweep measures: {names}.", field="metric"
        )
    best = max(results, key=lambda r: r.metrics[metric])
    ids = list(best.per_question)
    a = [best.per_question[q].metrics[metric] for q in ids]
    tested = []
    for r in results:
        b = [r.per_question[q].metrics[metric] for q in ids]
        versus = None if r is best or len(ids) < 2 else paired_comparison(metric, a, b, alpha=alpha)
        tested.append(r.model_copy(update={"versus_best": versus}))
    tied = [r for r in tested if r.versus_best is None or not r.versus_best.significant]
    # only what `ragsonde ingest` takes: a recommendation must be one the user can apply
    ingestable = [r for r in tied if r.config.fits(window)]
    chosen = min(ingestable or tied, key=lambda r: (r.costs.points, -r.metrics[metric]))
    refused = sorted(r.label for r in tied if not r.config.fits(window))
    if refused:
        warnings.append(
            f"{', '.join(refused)}: chunks longer than the embedder reads ({window} word "
            "pieces), which `ragsonde ingest` refuses with this embedder; not recommended."
            + ("" if ingestable else " No configuration within noise of the best fits.")
        )
    if chosen.label == best.label:
        text = f"{best.label}: the best on {metric} ({best.metrics[metric]:.4f})."
    else:
        text = (
            f"{chosen.label}: {metric} {chosen.metrics[metric]:.4f} against the best "
            f"({best.label}, {best.metrics[metric]:.4f}), no significant difference "
            f"(paired tests, alpha {alpha}), with {chosen.costs.points} points instead of "
            f"{best.costs.points}."
        )
    others = [r for r in tested if r.versus_best is not None]
    if others and all(not r.versus_best.significant for r in others if r.versus_best):
        warnings.append(
            f"Every configuration is within noise of the best on {metric}: no difference is "
            f"significant at alpha {alpha} over {len(ids)} questions. More questions, or "
            "chunking does not matter here."
        )
    shares = [r.lengths.single_chunk_docs for r in tested]
    if float(np.median(shares)) >= SHORT_CORPUS:
        warnings.append(
            f"The corpus is too short for chunking to matter: under most configurations "
            f"{float(np.median(shares)):.0%} of the documents are a single chunk."
        )
    for r in tested:
        if r.lengths.over_window:
            warnings.append(
                f"{r.label}: {r.lengths.over_window} of {r.costs.points} chunks are longer than "
                f"the embedder reads ({window} word pieces): their tails are never embedded."
            )
    return Verdict(tested, best.label, chosen.label, text)
