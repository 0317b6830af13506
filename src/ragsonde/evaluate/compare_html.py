"""The comparison of two runs as one self-contained HTML page (``eval --versus/--against
--report``): both sides' headline metrics, then each compared metric's difference B − A with
its intervals drawn around 0 (the tests' bootstrap interval, the classical one over the
labelled queries, and on a partly labelled benchmark the PPI++ one over every query, which the
verdict then follows).

The geometry of the drawing is computed here; the template (``templates/comparison.html``,
autoescape on) only places it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsonde.evaluate.breakdown import headline_metrics
from ragsonde.evaluate.comparison import Comparison, MetricComparison

if TYPE_CHECKING:
    from ragsonde.evaluate.report import EvalReport, VersusReport

__all__ = ["IntervalBar", "interval_bars", "render_html_comparison", "write_html_comparison"]

#: The drawing's width in pixels; 0 sits in its middle.
_WIDTH = 240


@dataclass(frozen=True)
class IntervalBar:
    """One interval of a difference, placed on the drawing: ``x1``..``x2`` and the estimate
    ``x`` (pixels), on a scale symmetric around 0."""

    name: str
    low: float
    high: float
    estimate: float
    x1: float
    x2: float
    x: float


def _reach(m: MetricComparison) -> float:
    ends = [abs(m.ci_low), abs(m.ci_high), abs(m.delta)]
    for est in (m.classical, m.ppi):
        if est is not None:
            ends += [abs(est.low), abs(est.high)]
    return max(max(ends), 1e-6)


def interval_bars(m: MetricComparison) -> list[IntervalBar]:
    """The metric's intervals of B − A (bootstrap, classical, PPI++ when given), scaled so that
    the widest end reaches the drawing's edge and 0 sits in its middle."""
    reach = _reach(m)

    def at(v: float) -> float:
        return round(_WIDTH / 2 + v / reach * (_WIDTH / 2 - 4), 1)

    shown: list[tuple[str, float, float, float]] = [
        ("bootstrap (tests' queries)", m.ci_low, m.ci_high, m.delta)
    ]
    if m.classical is not None:
        c = m.classical
        shown.append((f"classical ({c.n_labeled} labelled)", c.low, c.high, c.estimate))
    if m.ppi is not None:
        p = m.ppi
        shown.append(
            (f"{p.method} ({p.n_labeled} labelled, {p.n_predicted} predicted)", p.low, p.high,
             p.estimate)
        )  # fmt: skip
    return [IntervalBar(n, lo, hi, e, at(lo), at(hi), at(e)) for n, lo, hi, e in shown]


def _labelled(report: EvalReport) -> int:
    return sum(1 for row in report.per_query.values() if row.relevant)


def _context(versus: VersusReport, title: str) -> dict[str, Any]:
    comparison: Comparison = versus.comparison
    sides = {"A": versus.a, "B": versus.b}
    names = headline_metrics(versus.a.metrics, [])
    return {
        "title": title,
        "c": comparison,
        "sides": sides,
        "labelled": {k: _labelled(r) for k, r in sides.items()},
        "headline": [n for n in names if n in versus.b.metrics],
        "bars": {m.metric: interval_bars(m) for m in comparison.metrics},
        "width": _WIDTH,
    }


def render_html_comparison(versus: VersusReport, title: str = "") -> str:
    """The comparison as one HTML page."""
    from ragsonde.evaluate.html import environment

    heading = title or f"ragsonde comparison: {versus.a.dataset}"
    return environment().get_template("comparison.html").render(_context(versus, heading))


def write_html_comparison(versus: VersusReport, path: Path, title: str = "") -> None:
    from ragsonde.outputs import write_text

    write_text(path, render_html_comparison(versus, title))
