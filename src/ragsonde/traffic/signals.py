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
from functools import cache

__all__ = [
    "SCORE_SIGNALS",
    "agreement_at_top",
    "idf_signals",
    "overlap",
    "ratio",
    "rbo",
    "score_signals",
    "wig",
]


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
    ranked = sorted(map(float, scores), reverse=True)
    out = {name: fn(ranked, k) for name, fn in SCORE_SIGNALS.items()}
    return {name: value for name, value in out.items() if math.isfinite(value)}


def overlap(a: Sequence[str], b: Sequence[str], k: int = 10) -> float:
    """Overlap@k of two rankings: the share of ``a``'s top k that ``b``'s top k holds too
    (0 when ``a`` is empty)."""
    top = a[:k]
    return len(set(top) & set(b[:k])) / len(top) if top else 0.0


def rbo(a: Sequence[str], b: Sequence[str], p: float = 0.9, depth: int = 20) -> float:
    """Rank-biased overlap (Webber et al. 2010), truncated at ``depth`` and not extrapolated:
    ``(1 - p) · Σ_{d=1..depth} p^(d-1) · |a[:d] ∩ b[:d]| / d``, in [0, 1 - p^depth].

    Two systems that agree near the top agree on what the query is about."""
    # the first ``depth`` ids once, as a tuple: a store's lazy ids (``Store.ranked``) are each
    # read once, and the loop indexes a tuple, not a Python-level sequence
    a, b = a[:depth], b[:depth]
    seen_a: set[str] = set()
    seen_b: set[str] = set()
    total = 0.0
    both = 0
    for d, weight in enumerate(_rbo_weights(p, depth), start=1):
        x = a[d - 1] if d <= len(a) else None
        y = b[d - 1] if d <= len(b) else None
        if x is not None:
            both += x in seen_b or x == y
            seen_a.add(x)
        if y is not None and y != x:
            both += y in seen_a
            seen_b.add(y)
        total += weight * both / d
    return (1 - p) * total


@cache
def _rbo_weights(p: float, depth: int) -> tuple[float, ...]:
    """``p^(d-1)`` for d = 1..depth (the same floats the sum computed each time)."""
    return tuple(p ** (d - 1) for d in range(1, depth + 1))


def agreement_at_top(top: str, rankings: Sequence[Sequence[str]]) -> float:
    """How high the served best result stands in each of the rankings fused into it: the mean
    over ``rankings`` of 1 / its rank there (0 where it is absent). 1 when every system put it
    first; a fused winner that no system ranks high is a compromise, not an answer."""
    if not rankings:
        return 0.0
    return sum(_reciprocal_rank(top, r) for r in rankings) / len(rankings)


def _reciprocal_rank(item: str, ranking: Sequence[str]) -> float:
    """1 / the rank of ``item`` in ``ranking``, 0 when absent (one pass: ``in`` then
    ``index`` read a lazy ranking twice)."""
    try:
        return 1.0 / (ranking.index(item) + 1)
    except ValueError:
        return 0.0


def ratio(scores: Sequence[float], k: int) -> float:
    """The best score over the k-th (or the last): the spread of scores whose scale changes from
    query to query (BM25's grows with the query's terms), free of that scale; 0 when the k-th is
    not positive."""
    if not scores:
        return 0.0
    last = scores[min(k, len(scores)) - 1]
    return scores[0] / last if last > 0 else 0.0


def wig(scores: Sequence[float], k: int, terms: int) -> float:
    """Weighted information gain (Zhou and Croft 2007) of a BM25 ranking: the mean of the top-k
    scores less the corpus's (0 for a sparse BM25 vector: a document without the terms scores
    nothing), over the square root of the query's term count."""
    top = scores[: min(k, len(scores))]
    if not top or terms <= 0:
        return 0.0
    return _mean(top) / math.sqrt(terms)


def idf_signals(term_df: Sequence[int], n_docs: int) -> dict[str, float]:
    """Pre-retrieval predictors from the query's terms' document frequencies in ``n_docs``
    documents: ``max_idf``, ``avg_idf`` (He and Ounis 2004) and ``scq`` (the summed collection
    query similarity, Zhao et al. 2008, with document frequency standing in for the term's
    collection frequency): ``Σ (1 + ln df) · idf``. IDF is BM25's, ``ln(1 + (N - df + 0.5) /
    (df + 0.5))``. An unseen term counts as ``df = 0``."""
    if not term_df or n_docs <= 0:
        return {}
    idf = [math.log(1 + (n_docs - df + 0.5) / (df + 0.5)) for df in term_df]
    scq = sum((1 + math.log(df)) * i for df, i in zip(term_df, idf, strict=True) if df > 0)
    return {"max_idf": max(idf), "avg_idf": _mean(idf), "scq": scq}
