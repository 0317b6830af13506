"""Compare two saved evaluation reports on the same queries: is B really better than A?

For each metric, the per-query values of A and B are paired by query id and compared with

* a paired t-test (:func:`scipy.stats.ttest_rel`),
* a paired randomization test (:func:`scipy.stats.permutation_test` with
  ``permutation_type="samples"``: under the null, A and B are exchangeable within each query),
* a paired bootstrap confidence interval of the mean difference B - A
  (:func:`scipy.stats.bootstrap` with ``paired=True``).

A difference is *significant* only when both tests reject at ``alpha``, so a gate built on it
does not flap on one test's borderline p-value. Every metric here is higher-is-better.

Usage, with reports saved by ``ragsonde eval … --save``::

    comparison = compare_reports(load_report(a_path), load_report(b_path), ["ndcg@10"])
    comparison.metric("ndcg@10").verdict       # "better" | "worse" | "no significant difference"
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.comparison import (
    Comparison,
    MetricComparison,
    MostChanged,
    QueryChange,
    ReportRef,
)
from ragsonde.evaluate.report import EvalReport, QueryRow

__all__ = ["compare_reports", "paired_comparison"]

#: How many query ids an error message shows before "…".
_SHOWN_IDS = 5
#: How many most-changed queries a comparison lists.
_TOP_CHANGED = 10

Array = NDArray[np.float64]
#: Differences that vary less than this are constant: saved metrics are rounded to 6 decimals,
#: so a constant shift can differ by float noise, which scipy's moments flag as precision loss.
_CONSTANT_ATOL = 1e-9


def _describe(report: EvalReport) -> ReportRef:
    s = report.search
    return ReportRef(
        dataset=report.dataset,
        collection=report.collection,
        embedder=report.embedder,
        search=s.mode + (f" {s.fusion}" if s.fusion else ""),  # two modes looked alike
    )


def _per_query(report: EvalReport, label: str) -> Mapping[str, QueryRow]:
    if not report.per_query:
        raise QueryValidationError(
            f"report {label} has no per-query results ('per_query'); save it with "
            "`ragsonde eval … --save report.json`.",
            field="per_query",
        )
    return report.per_query


def _examples(ids: set[str]) -> str:
    shown = sorted(ids)[:_SHOWN_IDS]
    return ", ".join(shown) + (" …" if len(ids) > _SHOWN_IDS else "")


def _check_same_queries(
    qa: Mapping[str, QueryRow], qb: Mapping[str, QueryRow], *, same_labels: bool = True
) -> list[str]:
    only_a, only_b = set(qa) - set(qb), set(qb) - set(qa)
    if only_a or only_b:
        parts = [
            f"{len(ids)} only in {label} ({_examples(ids)})"
            for label, ids in (("A", only_a), ("B", only_b))
            if ids
        ]
        raise QueryValidationError(
            f"the reports do not cover the same queries: {'; '.join(parts)}; "
            f"{len(set(qa) & set(qb))} in both. Compare reports of the same benchmark.",
            field="per_query",
        )
    # the same ids with other labels (or other questions): a paired test of the same system
    # read the difference of the labels as a significant regression
    differ = {
        q
        for q in (qa if same_labels else ())
        if qa[q].query != qb[q].query
        or (qa[q].relevant and qb[q].relevant and qa[q].relevant != qb[q].relevant)
    }
    if differ:
        raise QueryValidationError(
            f"the reports hold other questions or other labels for {len(differ)} of their "
            f"{len(qa)} queries ({_examples(differ)}): their metrics differ by the labels, not "
            "only by the systems. Compare reports of the same benchmark (its labels as they "
            "are in both), or pass --across-benchmarks to compare them anyway.",
            field="per_query",
        )
    return sorted(qa)


def _metric_names(qa: Mapping[str, QueryRow]) -> list[str]:
    """Metrics present for every query (a failed query may have none)."""
    names: dict[str, int] = {}
    for entry in qa.values():
        for name in entry.metrics:
            names[name] = names.get(name, 0) + 1
    return [n for n, count in names.items() if count == len(qa)]


def _choose_metrics(
    qa: Mapping[str, QueryRow],
    qb: Mapping[str, QueryRow],
    wanted: Sequence[str] | None,
) -> list[str]:
    in_b = set(_metric_names(qb))
    available = [n for n in _metric_names(qa) if n in in_b]
    if not wanted:
        if not available:
            raise QueryValidationError(
                "the reports share no per-query metric to compare.", field="metric"
            )
        return available
    unknown = [n for n in wanted if n not in available]
    if unknown:
        raise QueryValidationError(
            f"unknown metric {', '.join(map(repr, unknown))}; "
            f"available in both reports: {', '.join(available) or 'none'}.",
            field="metric",
        )
    return list(dict.fromkeys(wanted))


def _values(per_query: Mapping[str, QueryRow], ids: Sequence[str], name: str) -> Array:
    return np.asarray([per_query[q].metrics[name] for q in ids], dtype=np.float64)


def _mean_difference(x: Array, y: Array, axis: int = -1) -> Any:
    """The statistic of both resampling tests: mean of B - A (``x`` is B, ``y`` is A)."""
    return np.mean(x - y, axis=axis)


def _constant(d: Array) -> bool:
    return bool(np.ptp(d) <= _CONSTANT_ATOL)


def _ttest(a: Array, b: Array) -> tuple[float | None, float]:
    """t statistic (None when undefined) and two-sided p of the paired t-test of B against A."""
    d = b - a
    if _constant(d):
        # No variance: t is 0/0 or infinite and scipy answers NaN or warns. With no difference
        # there is nothing to detect; the same shift on every query is as certain as it gets.
        return None, 1.0 if abs(float(np.mean(d))) <= _CONSTANT_ATOL else 0.0
    res = stats.ttest_rel(b, a)
    return float(res.statistic), float(res.pvalue)


def _permutation(a: Array, b: Array, n_resamples: int, seed: int) -> float:
    """Two-sided p of the paired randomization test (swap A and B within each query)."""
    if np.all(np.abs(b - a) <= _CONSTANT_ATOL):
        return 1.0
    res = stats.permutation_test(
        (b, a),
        _mean_difference,
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        random_state=np.random.default_rng(seed),
    )
    return float(res.pvalue)


def _bootstrap_ci(
    a: Array, b: Array, confidence: float, n_resamples: int, seed: int
) -> tuple[float, float]:
    """Paired bootstrap CI of the mean difference B - A (BCa, percentile when BCa degenerates)."""
    d = b - a
    if _constant(d):
        return float(np.min(d)), float(np.max(d))
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("error", stats.DegenerateDataWarning)
            try:
                res = stats.bootstrap(
                    (b, a),
                    _mean_difference,
                    paired=True,
                    vectorized=True,
                    confidence_level=confidence,
                    n_resamples=n_resamples,
                    method=method,
                    random_state=np.random.default_rng(seed),
                )
            except stats.DegenerateDataWarning:
                continue
        low, high = res.confidence_interval
        if np.isfinite(low) and np.isfinite(high):
            return float(low), float(high)
    return float(np.min(d)), float(np.max(d))


def _verdict(delta: float, significant: bool) -> str:
    if not significant or delta == 0:
        return "no significant difference"
    return "better" if delta > 0 else "worse"


def _compare_metric(
    name: str, a: Array, b: Array, *, alpha: float, n_resamples: int, seed: int
) -> MetricComparison:
    mean_a, mean_b = float(np.mean(a)), float(np.mean(b))
    delta = mean_b - mean_a
    t, p_t = _ttest(a, b)
    p_perm = _permutation(a, b, n_resamples, seed)
    low, high = _bootstrap_ci(a, b, 1 - alpha, n_resamples, seed)
    significant = bool(p_t < alpha and p_perm < alpha)
    return MetricComparison(
        metric=name,
        mean_a=mean_a,
        mean_b=mean_b,
        delta=delta,
        relative_delta=delta / mean_a if mean_a else None,
        wins=int(np.sum(b > a)),
        ties=int(np.sum(b == a)),
        losses=int(np.sum(b < a)),
        t_statistic=t,
        p_ttest=p_t,
        p_permutation=p_perm,
        ci_low=low,
        ci_high=high,
        confidence=1 - alpha,
        significant=significant,
        verdict=_verdict(delta, significant),
    )


def _most_changed(
    per_query: Mapping[str, QueryRow], ids: Sequence[str], a: Array, b: Array
) -> list[QueryChange]:
    d = b - a
    # Stable sort on -|delta|: ties keep query-id order, so the list is deterministic.
    order = np.argsort(-np.abs(d), kind="stable")[:_TOP_CHANGED]
    return [
        QueryChange(
            query_id=ids[i],
            query=per_query[ids[i]].query,
            a=float(a[i]),
            b=float(b[i]),
            delta=float(d[i]),
        )
        for i in order
        if d[i] != 0
    ]


def paired_comparison(
    name: str,
    a: Sequence[float],
    b: Sequence[float],
    *,
    alpha: float = 0.05,
    n_resamples: int = 10000,
    seed: int = 0,
) -> MetricComparison:
    """``b`` against ``a``, query by query (the same queries in the same order): the deltas,
    both paired tests and the bootstrap interval that :func:`compare_reports` gives a metric."""
    if len(a) != len(b) or not a:
        raise QueryValidationError(
            f"paired comparison of {name}: {len(a)} and {len(b)} scores; it needs the same "
            "queries on both sides, at least one.",
            field="metric",
        )
    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return _compare_metric(name, va, vb, alpha=alpha, n_resamples=n_resamples, seed=seed)


#: judged@k apart by this much on a pooled benchmark: the labels favour one side.
COVERAGE_GAP = 0.1


def coverage_warnings(a: EvalReport, b: EvalReport) -> list[str]:
    """Where missing labels can change the verdict: a pooled benchmark (labels from judging hits)
    that labelled one side's hits more than the other's. With sparse labels (a known item per
    query) an unlabelled hit is not relevant on both sides alike, so nothing is said."""
    if not (a.benchmark.pooled or b.benchmark.pooled):
        return []
    ca, cb = a.coverage(), b.coverage()
    if ca is None or cb is None or ca[0] != cb[0] or abs(ca[1] - cb[1]) < COVERAGE_GAP:
        return []
    k = ca[0]
    return [
        f"judged@{k} is {ca[1]:.2f} for A and {cb[1]:.2f} for B: the judged pools hold more of "
        f"{'A' if ca[1] > cb[1] else 'B'}'s hits, so the other side's unjudged hits count as "
        "misses and part of the difference is the labels'. Judge both sides' hits (`ragsonde "
        "judge`) before trusting the verdicts."
    ]


def compare_reports(
    a: EvalReport,
    b: EvalReport,
    metrics: Sequence[str] | None = None,
    *,
    alpha: float = 0.05,
    n_resamples: int = 10000,
    seed: int = 0,
    across_benchmarks: bool = False,
) -> Comparison:
    """Compare report ``b`` against report ``a`` (read with :func:`~.saved.load_report`).

    ``metrics`` names the metrics to compare (default: every metric both reports have for every
    query). Deltas, wins and verdicts are B relative to A: "better" means B is significantly
    higher. Raises :class:`~ragsonde.errors.QueryValidationError` when the reports cover
    different queries, hold other questions or labels for the same ids (unless
    ``across_benchmarks``: a caller that marks the comparison as not like for like, as
    ``history diff --across-benchmarks`` does), or a named metric is missing.
    """
    if not 0 < alpha < 1:
        raise QueryValidationError(f"alpha must be in (0, 1), got {alpha}.", field="alpha")
    if n_resamples < 1:
        raise QueryValidationError("n_resamples must be positive.", field="n_resamples")
    qa, qb = _per_query(a, "A"), _per_query(b, "B")
    every = _check_same_queries(qa, qb, same_labels=not across_benchmarks)
    # a partly labelled benchmark (eval --estimate): the tests run on the labelled queries
    # (ragsonde.estimate.estimate_comparison adds PPI++'s difference over all of them)
    ids = [q for q in every if qa[q].relevant and qb[q].relevant]
    partly = 0 < len(ids) < len(every)
    ids = ids if partly else every
    names = _choose_metrics({q: qa[q] for q in ids}, {q: qb[q] for q in ids}, metrics)
    results = []
    for name in names:
        va, vb = _values(qa, ids, name), _values(qb, ids, name)
        results.append(
            _compare_metric(name, va, vb, alpha=alpha, n_resamples=n_resamples, seed=seed)
        )
    first = names[0]
    return Comparison(
        warnings=coverage_warnings(a, b),
        a=_describe(a),
        b=_describe(b),
        n_queries=len(ids),
        alpha=alpha,
        n_resamples=n_resamples,
        metrics=results,
        most_changed=MostChanged(
            metric=first,
            queries=_most_changed(qb, ids, _values(qa, ids, first), _values(qb, ids, first)),
        ),
    )
