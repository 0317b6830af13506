"""The tune report as one HTML file: tables and inline SVG scatter plots, no JavaScript.

Each plot puts nDCG@10 against one cost (p95 latency, vector memory); every configuration is a
grey dot, the Pareto front is drawn in blue and the recommendation is ringed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

from ragsonde import plots
from ragsonde.tune.report import ConfigResult, TuneReport

__all__ = ["render_html", "report_plots", "scatter_svg", "write_html"]


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
    """One scatter plot of nDCG@10 (y) against ``x``, as an SVG element: the Pareto front
    blue and on top, the others grey, the recommendation ringed."""
    dots = [
        plots.Dot(
            x=x(c),
            y=c.ndcg,
            title=f"{c.id}: nDCG@10 {c.ndcg:.4f}, {x_label} {x(c):.3g}",
            fill="#1f6feb" if c.id in front else "#bbb",
            radius=4 if c.id in front else 3,
            ring="#d73a49" if c.id == chosen else None,
        )
        for c in sorted(configs, key=lambda c: c.id in front)
    ]
    return plots.scatter_svg(dots, x_label=x_label, y_label="nDCG@10")


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
    from ragsonde.outputs import write_text

    write_text(path, render_html(report))
