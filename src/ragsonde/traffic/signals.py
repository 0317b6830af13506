"""Label-free signals of one query's retrieval, from the scores it got back (query performance
prediction). Each is a small function of the ranked scores, higher meaning a better-served
query unless its docstring says otherwise.

These are the signals the traffic report and the estimates share (through
:class:`ragsonde.models.prediction.Predictor`); the traffic room adds the ones that need more
than one ranking (agreement of dense and BM25, ANN against exact, production against replay).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

__all__ = ["SCORE_SIGNALS", "score_signals"]


def _top1(scores: Sequence[float], k: int) -> float:
    """The best score."""
    return scores[0]


def _gap(scores: Sequence[float], k: int) -> float:
    """Top-1 score less the k-th (or the last) score: a clear winner is a confident retrieval."""
    return scores[0] - scores[min(k, len(scores)) - 1]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _std(values: Sequence[float]) -> float:
    mu = _mean(values)
    return math.sqrt(sum((v - mu) ** 2 for v in values) / len(values))


def _nqc(scores: Sequence[float], k: int) -> float:
    """Normalized query commitment (Shtok et al. 2012): the standard deviation of the top-k
    scores over the mean of all scores returned (a stand-in for the corpus score)."""
    top = scores[: min(k, len(scores))]
    denominator = abs(_mean(scores))
    return _std(top) / denominator if denominator > 0 else 0.0


def _zscore(scores: Sequence[float], k: int) -> float:
    """How many standard deviations the top score stands above the rest of the top k."""
    top = scores[: min(k, len(scores))]
    sd = _std(top)
    return (top[0] - _mean(top)) / sd if sd > 0 else 0.0


#: name → signal over scores sorted best first (at least one score).
SCORE_SIGNALS: dict[str, Callable[[Sequence[float], int], float]] = {
    "top1": _top1,
    "gap": _gap,
    "nqc": _nqc,
    "zscore": _zscore,
}


def score_signals(scores: Sequence[float], k: int = 10) -> dict[str, float]:
    """Every score signal of one ranking (``scores`` best first); empty when nothing came back."""
    if not scores:
        return {}
    ranked = sorted((float(s) for s in scores), reverse=True)
    out = {name: fn(ranked, k) for name, fn in SCORE_SIGNALS.items()}
    return {name: value for name, value in out.items() if math.isfinite(value)}
