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
    "Paired",
    "diff_runs",
    "fingerprint_changes",
    "flip_metric",
    "query_flips",
]

#: A comparison of two reports completed with each metric's PPI++ difference
#: (:func:`ragsonde.estimate.estimate_comparison`).
Paired = Callable[[Comparison, EvalReport, EvalReport], Comparison]

#: The metrics a diff compares when none is named (those both runs have).
DEFAULT_METRICS = ("ndcg@10", "recall@10", "mrr@10", "hit_rate@10")
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
