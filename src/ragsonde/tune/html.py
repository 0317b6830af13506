"""The tune report as one HTML file: tables and inline SVG scatter plots, no JavaScript.

Each plot puts nDCG@10 against one cost (p95 latency, vector memory); every configuration is a
grey dot, the Pareto front is drawn in blue and the recommendation is ringed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from html import escape
from pathlib import Path

from ragsonde.errors import QueryValidationError
from ragsonde.tune.report import ConfigResult, TuneReport

__all__ = ["render_html", "report_plots", "scatter_svg", "write_html"]

_W, _H, _PAD = 480, 300, 48


def _fmt(value: float | str | None) -> str:
    if value is None:
        return "–"
    if isinstance(value, str):
        return value
    return f"{value:.4f}"


def scatter_svg(
    configs: list[ConfigResult],
    x: Callable[[ConfigResult], float],
    x_label: str,
    front: set[str],
    chosen: str | None,
) -> str:
    """One scatter plot of nDCG@10 (y) against ``x``, as an SVG element."""
    if not configs:
        return ""
    raw = [x(c) for c in configs]
    # costs spread over orders of magnitude (memory: 1/32 to 1x) read better on a log axis
    log = min(raw) > 0 and max(raw) / min(raw) > 20

    def tx(v: float) -> float:
        return math.log10(v) if log else v

    xs = [tx(v) for v in raw]
    ys = [c.ndcg for c in configs]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    x1 = x1 if x1 > x0 else x0 + 1.0
    y1 = y1 if y1 > y0 else y0 + 0.01

    def px(v: float) -> float:
        return _PAD + (v - x0) / (x1 - x0) * (_W - 2 * _PAD)

    def py(v: float) -> float:
        return _H - _PAD - (v - y0) / (y1 - y0) * (_H - 2 * _PAD)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'role="img" aria-label="nDCG@10 against {escape(x_label)}">',
        f'<line x1="{_PAD}" y1="{_H - _PAD}" x2="{_W - _PAD}" y2="{_H - _PAD}" stroke="#888"/>',
        f'<line x1="{_PAD}" y1="{_PAD}" x2="{_PAD}" y2="{_H - _PAD}" stroke="#888"/>',
        f'<text x="{_W / 2}" y="{_H - 12}" text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="12" y="{_H / 2}" transform="rotate(-90 12 {_H / 2})" '
        'text-anchor="middle">nDCG@10</text>',
        f'<text x="{_PAD}" y="{_H - _PAD + 14}" text-anchor="middle">{min(raw):.3g}</text>',
        f'<text x="{_W - _PAD}" y="{_H - _PAD + 14}" text-anchor="middle">{max(raw):.3g}'
        f"{' (log)' if log else ''}</text>",
        f'<text x="{_PAD - 4}" y="{_H - _PAD}" text-anchor="end">{y0:.3f}</text>',
        f'<text x="{_PAD - 4}" y="{_PAD + 4}" text-anchor="end">{y1:.3f}</text>',
    ]
    ordered = sorted(configs, key=lambda c: c.id in front)
    for c, cx in ((c, x(c)) for c in ordered):
        sx = px(tx(cx))
        on = c.id in front
        colour = "#1f6feb" if on else "#bbb"
        title = f"<title>{escape(c.id)}: nDCG@10 {c.ndcg:.4f}, {x_label} {cx:.3g}</title>"
        parts.append(
            f'<circle cx="{sx:.1f}" cy="{py(c.ndcg):.1f}" r="{4 if on else 3}" '
            f'fill="{colour}">{title}</circle>'
        )
        if c.id == chosen:
            parts.append(
                f'<circle cx="{sx:.1f}" cy="{py(c.ndcg):.1f}" r="8" fill="none" '
                'stroke="#d73a49" stroke-width="2"/>'
            )
    parts.append("</svg>")
    return "".join(parts)


def report_plots(report: TuneReport) -> dict[str, str]:
    """The report's plots by name (``latency``, ``memory``): nDCG@10 against each cost, the
    Pareto front in blue and the recommendation ringed. The HTML page and the bench's SVG files
    both use these."""
    front = set(report.pareto)
    chosen = report.recommendation.config
    configs = [c for c in report.configurations if math.isfinite(c.ndcg)]
    return {
        "latency": scatter_svg(
            configs, lambda c: c.latency_p95_ms, "p95 latency (ms)", front, chosen
        ),
        "memory": scatter_svg(
            configs, lambda c: c.vector_memory_mb, "vector memory (MB)", front, chosen
        ),
    }


def render_html(report: TuneReport) -> str:
    """The report page (Jinja2 template ``templates/tune.html``, autoescaped)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True,
    )
    front = set(report.pareto)
    plots = list(report_plots(report).values())
    front_rows = sorted((c for c in report.configurations if c.id in front), key=lambda c: -c.ndcg)
    return env.get_template("tune.html").render(
        report=report, plots=plots, front=front_rows, fmt=_fmt
    )


def write_html(report: TuneReport, path: Path) -> None:
    """Write the page to ``path``."""
    try:
        path.write_text(render_html(report), encoding="utf-8")
    except OSError as e:
        raise QueryValidationError(f"Cannot write {path}: {e.strerror or e}", field="html") from e
