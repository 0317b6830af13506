"""The terminal's view of estimated metrics (``eval --estimate``): each metric's estimate, its
95 % interval beside the classical one, and what it rests on; and the PPI++ difference of two
systems (``compare``, ``history diff``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rich.table import Table

from ragsonde.cli._common import console

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ragsonde.evaluate.comparison import MetricComparison
    from ragsonde.models.estimate import MetricEstimate

__all__ = ["render_estimates", "render_paired"]


def render_paired(metrics: Sequence[MetricComparison]) -> None:
    """One line per metric with a PPI++ difference B - A: its interval, "significant" only when
    the interval excludes 0, and the labelled queries it rests on (the paired tests of the
    table are over those alone)."""
    for m in metrics:
        if m.ppi is None:
            continue
        p = m.ppi
        verdict = "significant" if p.low > 0 or p.high < 0 else "n.s.: the interval holds 0"
        console.print(
            f"{m.metric}: B - A by {p.method} over every query {p.estimate:+.4f} "
            f"[{p.low:+.4f}, {p.high:+.4f}] ({verdict}; rests on {p.n_labeled} labelled "
            f"queries, {p.n_predicted} predicted)",
            soft_wrap=True,  # one line each, for grep and logs
        )


def render_estimates(estimates: Mapping[str, MetricEstimate]) -> None:
    """One row per metric; a line saying what the estimates rest on, and one for each group of
    metrics estimated otherwise (every labelled value the same: the exact bound)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for name, e in estimates.items():
        groups.setdefault((e.method, e.note), []).append(name)
    most = max(groups.values(), key=len)
    first = estimates[most[0]]
    table = Table(title="estimated metrics, 95 % intervals")
    for col in ("metric", "estimate", "interval", "classical (labelled only)", "width"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for name, e in estimates.items():
        classical = e.classical.high - e.classical.low
        table.add_row(
            name,
            f"{e.estimate:.4f}",
            f"[{e.low:.4f}, {e.high:.4f}]",
            f"[{e.classical.low:.4f}, {e.classical.high:.4f}]",
            f"{(e.high - e.low) / classical:.2f} x" if classical > 0 else "-",
        )
    console.print(table)
    console.print(
        "(the first table's metrics are the means of the labelled queries alone; these "
        f"estimates are for every query, and rest on the {first.n_labeled} a person labelled)"
    )
    if first.method == "classical" or not first.sources:  # "stratified": the plan's draw alone
        console.print(
            f"{first.method} estimate: {first.n_labeled} labelled queries alone"
            + (f" ({first.note})" if first.note else "")
        )
    else:
        console.print(
            f"{first.method}: {first.n_labeled} labelled queries, {first.n_predicted} predicted "
            f"by {', '.join(first.sources)}; width relative to the classical interval"
            + (f" ({first.note})" if first.note else "")
        )
    for (method, note), names in groups.items():
        if names is not most:
            console.print(f"{', '.join(names)}: {method}" + (f" ({note})" if note else ""))
