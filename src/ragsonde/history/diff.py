"""``history diff A B``: what changed between two runs, and what it did.

* the fingerprint fields that differ, and only those ("only show the diff");
* the metric deltas with the paired tests and bootstrap intervals of
  :func:`~ragsonde.evaluate.compare.compare_reports` (not re-implemented here), and, where the
  surface hands ``paired`` (:func:`ragsonde.estimate.estimate_comparison`: the estimate room
  sits above this one), each metric's paired difference estimated by PPI++ on the shared
  queries of runs of a partly labelled benchmark (``eval --estimate``);
* the queries that flipped between hit and miss on :func:`flip_metric`, each with why where the
  run in which it missed was evaluated with ``--explain`` (:mod:`.why`).

Runs of different benchmarks (queries or labels: the fingerprint's benchmark hash) are not
compared like for like: their metrics are refused unless ``across_benchmarks`` asks for them,
and then the diff says so (``like_for_like: false``).

Runs that ranked to different depths (:func:`ranked_depth`: a traffic run's ``top_k``, an
evaluation's deepest cutoff) differ in every figure read over the whole list, whatever the
retrieval did: a traffic run's signals (the gap from the best to the k-th score, NQC, overlap@k,
the results returned) and what is predicted from them, an evaluation's ``mrr`` or ``map``
without a cutoff. Those metrics keep their figures but get the verdict :data:`NOT_COMPARABLE`
(never "worse", so no gate fails on them), and the diff says why (``not_comparable``). A metric
with its own cutoff (``recall@10``) reads the same ten results in both runs and is compared.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragsonde.evaluate.comparison import Comparison, no_regression_gate
from ragsonde.evaluate.report import EvalReport
from ragsonde.history.models import FieldChange, Fingerprint, QueryFlip, RunDiff
from ragsonde.history.store import RecordedRun
from ragsonde.history.why import explain_flips

__all__ = [
    "DEFAULT_METRICS",
    "LABEL_FREE",
    "NOT_COMPARABLE",
    "Paired",
    "diff_runs",
    "fingerprint_changes",
    "flip_metric",
    "query_flips",
    "ranked_depth",
]

#: A comparison of two reports completed with each metric's PPI++ difference
#: (:func:`ragsonde.estimate.estimate_comparison`).
Paired = Callable[[Comparison, EvalReport, EvalReport], Comparison]

#: The metrics a diff compares when none is named (those both runs have).
DEFAULT_METRICS = ("ndcg@10", "recall@10", "mrr@10", "hit_rate@10")
#: The verdict of a metric whose figures the two runs read at different depths.
NOT_COMPARABLE = "not comparable"
#: The ``relevance_by`` of a recorded traffic run (:mod:`ragsonde.traffic.record`): no labels,
#: and figures read over the top_k results each query was served.
LABEL_FREE = "none (label-free traffic)"
#: The metric whose hits and misses are listed, first one both runs have.
_FLIP_PREFERENCE = ("hit_rate@10", "hit_rate@5", "recall@10", "ndcg@10")


def fingerprint_changes(a: Fingerprint, b: Fingerprint) -> list[FieldChange]:
    """The dotted fields whose values differ (a field only one side has counts as changed)."""
    fa, fb = a.flat(), b.flat()
    return [
        FieldChange(field=name, a=fa.get(name), b=fb.get(name))
        for name in sorted(fa.keys() | fb.keys())
        if fa.get(name) != fb.get(name)
    ]


def flip_metric(a: EvalReport, b: EvalReport) -> str | None:
    """``hit_rate@10`` if both reports have it, else the first of the fallbacks they share."""
    shared = a.metrics.keys() & b.metrics.keys()
    for name in _FLIP_PREFERENCE:
        if name in shared:
            return name
    hits = sorted(n for n in shared if n.startswith("hit_rate@"))
    return hits[0] if hits else None


def query_flips(a: EvalReport, b: EvalReport, metric: str) -> list[QueryFlip]:
    """Queries scored > 0 on ``metric`` in one run and 0 in the other, lost ones first."""
    out: list[QueryFlip] = []
    for qid in sorted(a.per_query.keys() & b.per_query.keys()):
        va = a.per_query[qid].metrics.get(metric)
        vb = b.per_query[qid].metrics.get(metric)
        if va is None or vb is None or (va > 0) == (vb > 0):
            continue
        out.append(
            QueryFlip(
                query_id=qid,
                query=b.per_query[qid].query,
                direction="lost" if va > 0 else "gained",
                a=va,
                b=vb,
            )
        )
    return sorted(out, key=lambda f: (f.direction != "lost", f.query_id))


def ranked_depth(run: RecordedRun) -> int | None:
    """How many results a run's figures without a cutoff read per query: a traffic run's
    ``top_k`` (its signals read the served list); an evaluation's deepest cutoff (``--k``),
    which it ranks to whatever ``top_k`` says. None when the run does not record it."""
    if run.report.relevance_by == LABEL_FREE:
        top_k = run.fingerprint.search.get("top_k")
        return top_k if isinstance(top_k, int) else None
    return max(run.report.ks) if run.report.ks else None


def _mark_not_comparable(
    comparison: Comparison, a: RecordedRun, b: RecordedRun
) -> tuple[Comparison, str | None]:
    """``comparison`` with the metrics read over the whole ranked list marked
    :data:`NOT_COMPARABLE` when the runs ranked to different depths, and why; unchanged else."""
    depth_a, depth_b = ranked_depth(a), ranked_depth(b)
    if depth_a == depth_b:
        return comparison, None
    marked = [m.metric for m in comparison.metrics if "@" not in m.metric]
    if not marked:
        return comparison, None
    metrics = [
        m.model_copy(update={"verdict": NOT_COMPARABLE, "significant": False})
        if m.metric in marked
        else m
        for m in comparison.metrics
    ]
    what = "top_k" if a.report.relevance_by == LABEL_FREE else "the deepest cutoff (--k)"
    why = (
        f"{what} differs ({depth_a} in run {a.summary.run_id}, {depth_b} in run "
        f"{b.summary.run_id}): {', '.join(marked)} have no cutoff of their own (they are "
        "read from the list each run ranked), so their figures at different k are not "
        "comparable: marked, not called better or worse. A metric with its own cutoff "
        "(name@k) is compared."
    )
    return comparison.model_copy(update={"metrics": metrics}), why


def diff_runs(
    a: RecordedRun,
    b: RecordedRun,
    metrics: Sequence[str] | None = None,
    *,
    alpha: float = 0.05,
    n_resamples: int = 10000,
    across_benchmarks: bool = False,
    gate: bool = False,
    paired: Paired | None = None,
) -> RunDiff:
    """B against A on ``metrics`` (default: :data:`DEFAULT_METRICS`, else all both have).
    ``gate``: add the no-regression verdict (on ndcg@10 when compared). ``paired``: each
    metric's PPI++ difference over the queries both runs have, where they are of a partly
    labelled benchmark (each metric's ``ppi``; unchanged otherwise)."""
    from ragsonde.evaluate.compare import compare_reports

    changes = fingerprint_changes(a.fingerprint, b.fingerprint)
    same = a.fingerprint.benchmark.sha256 == b.fingerprint.benchmark.sha256
    if not same and not across_benchmarks:
        what = [c.field for c in changes if c.field.startswith("benchmark.")]
        return RunDiff(
            a=a.summary,
            b=b.summary,
            like_for_like=False,
            refused=(
                f"runs {a.summary.run_id} and {b.summary.run_id} are on different benchmarks "
                f"({', '.join(what)} changed): their metrics are not comparable like for like. "
                "Pass --across-benchmarks to compare them anyway, marked as such."
            ),
            changes=changes,
        )
    named = list(metrics) if metrics else None
    if not metrics:
        shared = a.report.metrics.keys() & b.report.metrics.keys()
        metrics = [m for m in DEFAULT_METRICS if m in shared] or None
    comparison = compare_reports(
        a.report,
        b.report,
        metrics,
        alpha=alpha,
        n_resamples=n_resamples,
        across_benchmarks=not same,  # asked for, and marked not like for like
    )
    if paired is not None:
        comparison = paired(comparison, *_shared(a.report, b.report))
    comparison, not_comparable = _mark_not_comparable(comparison, a, b)
    verdict = no_regression_gate(comparison, named) if gate else None
    flip = flip_metric(a.report, b.report)
    flips = query_flips(a.report, b.report, flip) if flip else []
    flips = explain_flips(
        flips, a.report, b.report, changes, run_a=a.summary.run_id, run_b=b.summary.run_id
    )
    return RunDiff(
        a=a.summary,
        b=b.summary,
        like_for_like=same,
        changes=changes,
        metrics=comparison.metrics,
        not_comparable=not_comparable,
        flip_metric=flip,
        flips=flips,
        gate=verdict,
    )


def _shared(a: EvalReport, b: EvalReport) -> tuple[EvalReport, EvalReport]:
    """Both reports on the queries they share (runs across benchmarks may differ)."""
    ids = sorted(a.per_query.keys() & b.per_query.keys())
    if len(ids) == len(a.per_query) == len(b.per_query):
        return a, b

    def only(r: EvalReport) -> EvalReport:
        return r.model_copy(update={"per_query": {q: r.per_query[q] for q in ids}})

    return only(a), only(b)
