"""What the ``judged`` row of a report means for its benchmark, in one sentence, where the row is
shown (the CLI's table, the HTML report): sparse labels make it low by construction, pooled
labels make a low value a lower bound on every metric."""

from __future__ import annotations

from ragsonde.evaluate.report import EvalReport

__all__ = ["coverage_note"]


def coverage_note(report: EvalReport) -> str | None:
    """The sentence under the metrics table (None: no ``judged`` row)."""
    cov = report.coverage()
    if cov is None:
        return None
    k, value = cov
    what = f"judged@{k} ({value:.2f}) is the share of the top {k} hits that carry a label"
    if report.benchmark.pooled:
        return (
            f"{what}. The labels come from judged pools: an unlabelled hit fell outside "
            "them and counts as a miss, so low coverage makes every metric a lower bound."
        )
    return (
        f"{what}. The labels are sparse (relevant documents only, no judged pools), so an "
        "unlabelled hit counts as not relevant, the standard assumption of IR evaluation: "
        "a low judged@k is expected here, not a fault."
    )
