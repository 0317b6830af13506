"""Hybrid mode's own signal set for ``predicted``: the candidates, and the rule that picks one
without SciFact's labels (``bench_traffic.py`` runs it).

Why a set of its own: a fused ranking's confidence lives in the fused scores and in the
agreement of the rankings fused into it, not in each input's spread alone. The dense default
(``predictor.SIGNALS``) is kept for dense mode; in hybrid mode it stands as ``six``.

Candidates (each the mean of its signals' percentiles among the collection's own sentences,
equal weights, so the fixed weak cut keeps its meaning: less confident than nine in ten of the
collection's own sentences):

- ``six``: ``predictor.SIGNALS`` (the status quo);
- ``inputs+agreement``: each input's confidence and their agreement, no fused score
  (dense_top1, dense_nqc, bm25_nqc, rbo, agree_top1);
- ``fused+agreement``: the fused scores and the inputs' agreement (top1, gap, nqc, rbo,
  agree_top1);
- ``six+agree_top1``;
- ``six+served_agreement``: six, and the served ranking's agreement with each input
  (rbo_dense, rbo_bm25);
- ``fused+served_agreement``: top1, gap, nqc, rbo_dense, rbo_bm25;
- ``fused+all_agreement``: top1, gap, nqc, rbo, agree_top1, rbo_dense, rbo_bm25.

The rule, written down (and committed) on 2026-11-27 before any candidate was scored on
SciFact's labels: in hybrid mode, score each candidate by the mean of three Spearman
correlations that need no SciFact label: (1) on Chroma's 319 chunking questions against their
chunk-level nDCG@10 (``_traffic_fit``); (2) on Chroma's own calibration sentences and (3) on
SciFact's own calibration sentences, each against 1 / rank of the chunk the sentence was taken
from in the served top k (``Calibration.found``). The highest mean wins; a candidate within
0.005 of a better one with fewer signals loses to it, and ``six`` wins any tie within 0.005
(the status quo needs a real gain to move). If ``six`` wins, nothing new ships. SciFact's
human labels enter only afterwards: each candidate's in-sample figure, and a nested 10-fold
cross-validation on SciFact (chosen by Spearman on nine folds, scored on the tenth) reported as
held out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: name -> signals; the first is the status quo.
HYBRID_CANDIDATES: dict[str, tuple[str, ...]] = {
    "six": ("top1", "gap", "nqc", "dense_nqc", "bm25_nqc", "rbo"),
    "inputs+agreement": ("dense_top1", "dense_nqc", "bm25_nqc", "rbo", "agree_top1"),
    "fused+agreement": ("top1", "gap", "nqc", "rbo", "agree_top1"),
    "six+agree_top1": ("top1", "gap", "nqc", "dense_nqc", "bm25_nqc", "rbo", "agree_top1"),
    "six+served_agreement": (
        "top1", "gap", "nqc", "dense_nqc", "bm25_nqc", "rbo", "rbo_dense", "rbo_bm25",
    ),
    "fused+served_agreement": ("top1", "gap", "nqc", "rbo_dense", "rbo_bm25"),
    "fused+all_agreement": ("top1", "gap", "nqc", "rbo", "agree_top1", "rbo_dense", "rbo_bm25"),
}  # fmt: skip
STATUS_QUO = "six"
TIE = 0.005


def rule_choice(criteria: Mapping[str, float]) -> str:
    """The rule: candidate -> mean of its three label-free Spearmans; the winner's name."""
    best = max(criteria.values())
    near = [c for c, v in criteria.items() if v >= best - TIE]
    if STATUS_QUO in near:
        return STATUS_QUO
    return min(near, key=lambda c: (len(HYBRID_CANDIDATES[c]), -criteria[c]))


def mean_pct(signals: Mapping[str, float], calibration: Any, names: Sequence[str]) -> float:
    """The equal-weight mean of ``names``' percentiles, 0 for an empty or out-of-domain query
    (as ``predictor.combine`` does)."""
    if signals.get("results", 0.0) == 0.0 or signals.get("out_of_domain") == 1.0:
        return 0.0
    pcts = [calibration.percentile(n, signals[n]) for n in names if n in signals]
    known = [p for p in pcts if p is not None]
    return sum(known) / len(known) if known else 0.5
