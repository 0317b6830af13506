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

Native code. trec_eval is C: a query or document id that is not valid Unicode (a lone surrogate)
crashes the whole process inside it. :func:`compute_metrics` refuses such an id before any native
call (a VALIDATION_ERROR naming it), and the native passes go through one function,
:func:`native_scores`, on plain data, so a caller that must survive a crash (the server's eval
jobs) can run it in a worker process: :func:`native_runner` sets where it runs for the current
context.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ragsonde.errors import QueryValidationError
from ragsonde.models.text import invalid_unicode_at, printable

if TYPE_CHECKING:
    from ragsonde.evaluate.report import Percentiles

__all__ = [
    "COVERAGE",
    "DEFAULT_KS",
    "METRICS",
    "by_rank",
    "compute_metrics",
    "metric_names",
    "native_runner",
    "native_scores",
    "parse_metric",
    "percentiles",
    "use_native_runner",
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


#: One native pass: metric names, qrels and the run, as plain dicts (picklable).
NativePass = tuple[list[str], dict[str, dict[str, int]], dict[str, dict[str, float]]]
#: What the native passes give back: (query id, metric name, value).
NativeScore = tuple[str, str, float]
#: Runs :func:`native_scores` on the passes somewhere; ``None``: in this process.
NativeRunner = Callable[[list[NativePass]], list[NativeScore]]
_RUNNER: ContextVar[NativeRunner | None] = ContextVar("ragsonde_native_runner", default=None)


def use_native_runner(runner: NativeRunner) -> None:
    """From now on in this thread (its context), the native metric passes go to ``runner``: for
    a thread that only runs such work (the server's eval jobs thread, as its initializer)."""
    _RUNNER.set(runner)


@contextmanager
def native_runner(runner: NativeRunner) -> Iterator[None]:
    """Within this block (this thread or task), the native metric passes go to ``runner``,
    which must return what :func:`native_scores` returns for them (e.g. run it in a worker
    process, see :mod:`ragsonde.server.workers`)."""
    token = _RUNNER.set(runner)
    try:
        yield
    finally:
        _RUNNER.reset(token)


def native_scores(passes: list[NativePass]) -> list[NativeScore]:
    """trec_eval (through ir-measures and pytrec_eval) over each pass: the one native call.

    Takes the metric names, not ir-measures objects, so the passes cross a process boundary as
    plain data. The ids must be valid Unicode (:func:`compute_metrics` checks them).
    """
    ir = _im()
    out: list[NativeScore] = []
    for names, qrels, run in passes:
        measures = {METRICS[f](k): name for name in names for f, k in [parse_metric(name)]}
        for metric in ir.evaluator(list(measures), qrels).iter_calc(run):
            out.append((metric.query_id, measures[metric.measure], float(metric.value)))
    return out


def _check_ids(what: str, table: Mapping[str, Mapping[str, Any]]) -> None:
    """A VALIDATION_ERROR for the first id in ``table`` that native code would crash on."""
    for qid, docs in table.items():
        if invalid_unicode_at(qid) is not None:
            raise QueryValidationError(
                f"{what}: query id '{printable(qid)}' is not valid Unicode text (a lone "
                "surrogate); trec_eval cannot read it.",
                field="query_id",
            )
        if invalid_unicode_at("".join(docs)) is not None:  # one encode per query, then find it
            bad = next(d for d in docs if invalid_unicode_at(d) is not None)
            raise QueryValidationError(
                f"{what}: document id '{printable(bad)}' of query '{qid}' is not valid Unicode "
                "text (a lone surrogate); trec_eval cannot read it.",
                field="doc_id",
            )


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
    ranking: dict[str, str] = {}
    coverage: dict[str, str] = {}
    for name in names:
        family, _ = parse_metric(name)
        (coverage if family in COVERAGE else ranking)[name] = name
    # Plain dicts go to pytrec_eval as they are; one evaluator per call. (Lists of ir-measures
    # Qrel/ScoredDoc tuples cost 2.5x more on 10k queries x 100 results: bench/bench_eval.py.)
    qrel_dict = {q: {d: int(r) for d, r in docs.items()} for q, docs in qrels.items()}
    # A query with no hits scores 0 everywhere (its zeros are set below); it is left out of the
    # run because ir-measures' Judged@k divides by the number of hits returned.
    run_dict = {q: {d: float(s) for d, s in docs.items()} for q, docs in run.items() if docs}
    _check_ids("qrels", qrel_dict)
    _check_ids("run", run_dict)
    per_query: dict[str, dict[str, float]] = {
        q: dict.fromkeys([*ranking, *coverage], 0.0) for q in qrels
    }
    passes: list[NativePass] = []
    if not judged_only:
        passes.append(([*coverage, *ranking], qrel_dict, run_dict))
    else:
        if coverage:
            passes.append((list(coverage), qrel_dict, run_dict))
        # The condensed list, made here rather than with ir-measures' ``judged_only`` parameter,
        # which no provider supports for RR@k (and trec_eval -J is exactly this).
        condensed = {
            q: kept
            for q, docs in run_dict.items()
            if (kept := {d: s for d, s in docs.items() if d in qrel_dict.get(q, {})})
        }
        if ranking:
            passes.append((list(ranking), qrel_dict, condensed))
    passes = [p for p in passes if p[0]]
    runner = _RUNNER.get() or native_scores
    for qid, name, value in runner(passes) if passes else []:
        if qid in per_query:
            per_query[qid][name] = value
    n = max(len(per_query), 1)
    means = {
        name: sum(values[name] for values in per_query.values()) / n
        for name in [*ranking, *coverage]
    }
    return means, per_query


def by_rank(run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The run the metrics read: scores from the rank (n, n-1, …, 1), whatever the engine's or
    a tool's scores were.

    ir-measures sorts by score, so the ranking's order must be in the scores: a similarity score
    clamped into [0, 1] ties (Dot above 1, Cosine below 0), and ties would be broken by id."""
    return {
        qid: {doc: float(len(docs) - i) for i, doc in enumerate(docs)} for qid, docs in run.items()
    }


def percentiles(values: Sequence[float]) -> Percentiles:
    """A run's latency percentiles of ``values`` (milliseconds), to the microsecond; zeros when
    there are none."""
    import numpy as np

    from ragsonde.evaluate.report import Percentiles

    if not values:
        return Percentiles()
    arr = np.asarray(values, dtype=np.float64)
    p50, p95, p99 = np.percentile(arr, [50, 95, 99])
    return Percentiles(
        p50=round(float(p50), 3),
        p95=round(float(p95), 3),
        p99=round(float(p99), 3),
        mean=round(float(arr.mean()), 3),
        max=round(float(arr.max()), 3),
    )
