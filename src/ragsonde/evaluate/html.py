"""One self-contained HTML report (inline CSS and SVG; no script, no CDN: it opens offline).

Rendered from :class:`~ragsonde.evaluate.report.EvalReport` with the Jinja2 template
``templates/report.html`` (autoescape on: stored documents are untrusted input). Plots:
metric@k curves, a latency histogram per stage, the distribution of per-query scores, and the
worst queries with what was expected and what came back; tables of metrics per filter and per
``--by`` group when the report has them; on a span-labelled benchmark, the worst queries' top
chunks with the answer marked inside them (:mod:`.highlight`). This module only computes the
geometry of the plots and where the marks go; the template escapes every piece of text.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragsonde.evaluate.breakdown import headline_metrics
from ragsonde.evaluate.coverage import coverage_note
from ragsonde.evaluate.highlight import Piece, highlight
from ragsonde.evaluate.report import EvalReport, QueryRow, SpanHit
from ragsonde.evaluate.spans import Span

if TYPE_CHECKING:
    import jinja2

__all__ = [
    "Chart",
    "MarkedHit",
    "bar_chart",
    "environment",
    "line_chart",
    "marked_hits",
    "render_html_report",
    "write_html_report",
]

_W, _H, _PAD = 520, 240, 40
#: The legend's width, right of a line chart's plotting area.
_LEGEND = 130
_COLORS = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2"]
_WORST = 15
_SHOWN_IDS = 10
_MISS_ROWS = 100
_UNMARKED_CHARS = 240  # a hit that holds none of the answer: its opening only


@dataclass(frozen=True)
class MarkedHit:
    """A retrieved chunk of a span-labelled query, its text cut where the answer is."""

    hit: SpanHit
    pieces: list[Piece]

    @property
    def marked(self) -> bool:
        return any(p.marked for p in self.pieces)


def marked_hits(row: QueryRow) -> list[MarkedHit] | None:
    """``row``'s hits with the answer marked (``None``: no spans to place it by)."""
    if row.references is None or row.hits is None:
        return None
    refs = [Span(r.doc_id, r.start, r.end) for r in row.references]
    out = []
    for h in row.hits:
        pieces = highlight(h.text, Span(h.doc_id, h.start, h.end), refs)
        if not any(p.marked for p in pieces) and len(h.text) > _UNMARKED_CHARS:
            pieces = [Piece(h.text[:_UNMARKED_CHARS] + " …", False)]
        out.append(MarkedHit(h, pieces))
    return out


@dataclass
class Chart:
    """An SVG plot, as coordinates the template draws."""

    width: int = _W
    height: int = _H
    pad: int = _PAD
    plot_width: int = _W
    """Where the plotting area ends: a line chart's legend sits to its right, off the lines."""
    y_ticks: list[tuple[float, str]] = field(default_factory=list)
    x_ticks: list[tuple[float, str]] = field(default_factory=list)
    lines: list[dict[str, Any]] = field(default_factory=list)
    bars: list[dict[str, Any]] = field(default_factory=list)


def _axes(y_max: float, x_labels: Sequence[str]) -> Chart:
    chart = Chart()
    for i in range(5):
        y = _H - _PAD - (_H - _PAD - 10) * i / 4
        chart.y_ticks.append((round(y + 4, 1), f"{y_max * i / 4:.3g}"))
    step = (_W - _PAD - 20) / max(len(x_labels), 1)
    every = max(1, math.ceil(len(x_labels) / 12))
    for i, label in enumerate(x_labels):
        if i % every == 0:
            chart.x_ticks.append((round(_PAD + step * (i + 0.5), 1), label))
    return chart


def line_chart(
    series: Mapping[str, Sequence[float]], x_labels: Sequence[str], y_max: float
) -> Chart:
    """Lines over shared x labels, with a legend beside the plot (never over its lines)."""
    y_max = y_max or 1.0
    chart = _axes(y_max, x_labels)
    chart.width = _W + _LEGEND
    step = (_W - _PAD - 20) / max(len(x_labels), 1)
    for n, (name, values) in enumerate(series.items()):
        points = " ".join(
            f"{_PAD + step * (i + 0.5):.1f},{_H - _PAD - (_H - _PAD - 10) * v / y_max:.1f}"
            for i, v in enumerate(values)
        )
        chart.lines.append(
            {
                "name": name,
                "color": _COLORS[n % len(_COLORS)],
                "points": points,
                "x": _W + 6,
                "y": 20 + 14 * n,
            }
        )
    return chart


def bar_chart(counts: Sequence[int], x_labels: Sequence[str], color: str = "#2563eb") -> Chart:
    """A histogram from bin counts."""
    y_max = float(max(counts, default=0)) or 1.0
    chart = _axes(y_max, x_labels)
    step = (_W - _PAD - 20) / max(len(counts), 1)
    for i, c in enumerate(counts):
        h = (_H - _PAD - 10) * c / y_max
        chart.bars.append(
            {
                "x": f"{_PAD + step * i + 1:.1f}",
                "y": f"{_H - _PAD - h:.1f}",
                "width": f"{max(step - 2, 1):.1f}",
                "height": f"{h:.1f}",
                "color": color,
                "title": f"{x_labels[i]}: {c}",
            }
        )
    return chart


def _histogram(
    values: Sequence[float], bins: int, lo: float, hi: float
) -> tuple[list[int], list[str]]:
    hi = hi if hi > lo else lo + 1.0
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(int((v - lo) / width), bins - 1)] += 1
    return counts, [f"{lo + width * i:.3g}" for i in range(bins)]


@cache
def environment() -> jinja2.Environment:
    """The templates of the HTML pages (autoescape on: stored documents are untrusted)."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("ragsonde.evaluate", "templates"),
        autoescape=jinja2.select_autoescape(default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _context(report: EvalReport) -> dict[str, Any]:
    metrics = report.metrics
    ks = report.ks
    families = list(dict.fromkeys(n.split("@")[0] for n in metrics if "@" in n))
    series = {f: [metrics.get(f"{f}@{k}", 0.0) for k in ks] for f in families}
    metric = "ndcg@10" if "ndcg@10" in metrics else next(iter(metrics))
    rows = list(report.per_query.values())
    latency_charts = []
    for n, (stage, _) in enumerate(report.latency.stages().items()):
        values = [float(getattr(q.timings, stage)) for q in rows]
        if values:
            counts, labels = _histogram(values, 20, 0.0, max(values))
            latency_charts.append((stage, bar_chart(counts, labels, _COLORS[n % len(_COLORS)])))
    scores = [q.metrics.get(metric, 0.0) for q in rows]
    counts, labels = _histogram(scores, 10, 0.0, 1.0)
    worst = sorted(report.per_query.items(), key=lambda kv: kv[1].metrics.get(metric, 0.0))
    sweep_chart = None
    if report.threshold_sweep is not None:
        sweep = report.threshold_sweep.rows
        sweep_chart = line_chart(
            {
                name: [getattr(r, name) for r in sweep]
                for name in ("precision", "recall", "f1", "no_result_share")
            },
            [f"{r.threshold:g}" for r in sweep],
            1.0,
        )
    misses = report.misses
    misses_chart = (
        bar_chart(list(misses.counts.values()), list(misses.counts), "#dc2626")
        if misses is not None
        else None
    )
    return {
        "r": report,
        "judged_note": coverage_note(report),
        "misses_chart": misses_chart,
        "miss_rows": misses.worst(_MISS_ROWS) if misses is not None else [],
        "title": f"ragsonde report: {report.dataset}",
        "series": series,
        "metric_chart": line_chart(series, [f"@{k}" for k in ks], 1.0),
        "latency_charts": latency_charts,
        "metric": metric,
        "distribution_chart": bar_chart(counts, labels, "#059669"),
        "worst": worst[:_WORST],
        "highlights": [
            (qid, q, hits) for qid, q in worst[:_WORST] if (hits := marked_hits(q)) is not None
        ],
        "sweep_chart": sweep_chart,
        "headline": headline_metrics(metrics, report.gates),
        "shown_ids": _SHOWN_IDS,
        "problems": {k: v for k, v in report.integrity.counts.items() if v},
    }


def render_html_report(report: EvalReport) -> str:
    """The report as one HTML page."""
    return environment().get_template("report.html").render(_context(report))


def write_html_report(report: EvalReport, path: Path) -> None:
    """The page at ``path``; never over the benchmark the report evaluated."""
    from ragsonde.ingest.sources import input_files
    from ragsonde.outputs import check_output, write_text

    check_output(Path(path), "path", inputs=input_files(report.dataset))
    write_text(path, render_html_report(report))
