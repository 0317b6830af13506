"""IR metrics by name (``ndcg@10``, ``recall@100``, ``mrr``…), computed by ``ir-measures``.

Nothing here re-implements a metric: each name maps to the reference measure that
``ir-measures`` runs on ``pytrec_eval`` (trec_eval's own code). Conventions: nDCG uses linear
gain over graded relevance (trec_eval ``ndcg_cut``); relevance ≥ 1 counts as relevant for the
binary metrics; the mean is over every benchmark query, a query with no results scoring 0.

========== ============================= ===========================================
name       ir-measures / trec_eval        meaning
========== ============================= ===========================================
ndcg@k     nDCG@k / ndcg_cut_k            graded gain discounted by log2(rank+1), normalised
recall@k   R@k / recall_k                 share of the relevant documents in the top k
precision@k P@k / P_k                     share of the top k that is relevant
mrr@k      RR@k / recip_rank (cut at k)   1 / rank of the first relevant result in the top k
mrr        RR / recip_rank                1 / rank of the first relevant result
map@k      AP@k / map_cut_k               mean of precision at each relevant rank, over R
hit_rate@k Success@k / success_k          1 if any relevant result is in the top k
judged@k   Judged@k                       share of the top k hits returned that carry a label
========== ============================= ===========================================

Coverage. ``judged@k`` says how far the other metrics can be trusted: an unjudged hit counts as a
miss, so with judged@10 at 0.4 most of the top 10 was never looked at. ``judged_only=True``
scores the condensed lists instead (unjudged hits dropped before ranking, as trec_eval ``-J``
does); judged@k itself is always measured on the full list.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ragsonde.errors import QueryValidationError

__all__ = [
    "COVERAGE",
    "DEFAULT_KS",
    "METRICS",
    "compute_metrics",
    "metric_names",
    "parse_metric",
]

DEFAULT_KS = (1, 3, 5, 10, 100)


def _im() -> Any:
    import ir_measures

    return ir_measures


#: Metric family -> ir-measures measure for a cutoff (``None``: uncut).
METRICS: dict[str, Callable[[int | None], Any]] = {
    "ndcg": lambda k: _im().nDCG @ k if k else _im().nDCG,
    "recall": lambda k: _im().R @ k if k else _im().R,
    "precision": lambda k: _im().P @ k if k else _im().P,
    "mrr": lambda k: _im().RR @ k if k else _im().RR,
    "map": lambda k: _im().AP @ k if k else _im().AP,
    "hit_rate": lambda k: _im().Success @ k if k else _im().Success,
    "judged": lambda k: _im().Judged @ k,
}
#: Families that measure the labels, not the ranking: never condensed by ``judged_only``.
COVERAGE = frozenset({"judged"})
_NEEDS_K = {"ndcg": False, "recall": True, "precision": True, "mrr": False, "map": False}
_NEEDS_K |= {"hit_rate": True, "judged": True}
_NAME = re.compile(r"^(?P<family>[a-z_]+)(?:@(?P<k>[1-9][0-9]*))?$")


def parse_metric(name: str) -> tuple[str, int | None]:
    """``"ndcg@10"`` -> ``("ndcg", 10)``; an unknown name lists the supported ones."""
    m = _NAME.match(name.strip().lower())
    family = m.group("family") if m else None
    if m is None or family not in METRICS:
        raise QueryValidationError(
            f"Unknown metric '{name}'. Supported: "
            + ", ".join(f"{f}@k" if _NEEDS_K[f] else f"{f}, {f}@k" for f in METRICS)
            + " (k a positive integer).",
            field="metric",
        )
    k = int(m.group("k")) if m.group("k") else None
    if k is None and _NEEDS_K[family]:
        raise QueryValidationError(
            f"Metric '{name}' needs a cutoff, e.g. {family}@10.", field="metric"
        )
    return family, k


def metric_names(ks: Sequence[int]) -> list[str]:
    """Every metric at every k (judged@k included), plus uncut MRR."""
    names = [f"{family}@{k}" for family in METRICS for k in ks]
    return [*names, "mrr"]


def compute_metrics(
    names: Iterable[str],
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    *,
    judged_only: bool = False,
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """``(means, per_query)`` for ``names`` over every query of ``qrels``.

    ``run`` maps query id -> {doc id: score}; ranks follow the scores (ties broken by doc id, as
    trec_eval does). A query missing from ``run`` scores 0 on every metric. With
    ``judged_only``, every metric but judged@k skips the hits ``qrels`` has no label for.
    """
    ir = _im()
    ranking: dict[Any, str] = {}
    coverage: dict[Any, str] = {}
    for name in names:
        family, k = parse_metric(name)
        (coverage if family in COVERAGE else ranking)[METRICS[family](k)] = name
    # Plain dicts go to pytrec_eval as they are; one evaluator per call. (Lists of ir-measures
    # Qrel/ScoredDoc tuples cost 2.5x more on 10k queries x 100 results: bench/bench_eval.py.)
    qrel_dict = {q: {d: int(r) for d, r in docs.items()} for q, docs in qrels.items()}
    # A query with no hits scores 0 everywhere (its zeros are set below); it is left out of the
    # run because ir-measures' Judged@k divides by the number of hits returned.
    run_dict = {q: {d: float(s) for d, s in docs.items()} for q, docs in run.items() if docs}
    per_query: dict[str, dict[str, float]] = {
        q: dict.fromkeys([*ranking.values(), *coverage.values()], 0.0) for q in qrels
    }
    passes: list[tuple[dict[Any, str], dict[str, dict[str, float]]]] = [(coverage, run_dict)]
    if not judged_only:
        passes = [(coverage | ranking, run_dict)]
    else:
        # The condensed list, made here rather than with ir-measures' ``judged_only`` parameter,
        # which no provider supports for RR@k (and trec_eval -J is exactly this).
        condensed = {
            q: kept
            for q, docs in run_dict.items()
            if (kept := {d: s for d, s in docs.items() if d in qrel_dict.get(q, {})})
        }
        passes.append((ranking, condensed))
    for measures, scored in passes:
        if not measures:
            continue
        for metric in ir.evaluator(list(measures), qrel_dict).iter_calc(scored):
            if metric.query_id in per_query:
                per_query[metric.query_id][measures[metric.measure]] = float(metric.value)
    n = max(len(per_query), 1)
    means = {
        name: sum(values[name] for values in per_query.values()) / n
        for name in [*ranking.values(), *coverage.values()]
    }
    return means, per_query
