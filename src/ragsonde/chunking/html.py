"""The chunking report as one HTML page: the table, and quality against cost as inline SVG."""

from __future__ import annotations

import math
from pathlib import Path

from ragsonde.chunking.report import ChunkingReport, ConfigResult
from ragsonde.plots import Dot, scatter_svg

__all__ = ["quality_cost_svg", "render_html", "write_html"]


def quality_cost_svg(report: ChunkingReport, metric: str | None = None) -> str:
    """``metric`` (default: the primary) against vector memory, one labelled dot per
    configuration; the best filled red, the recommended ringed."""
    name = metric or report.primary
    configs: list[ConfigResult] = [
        c for c in report.configurations if math.isfinite(c.metrics.get(name, math.nan))
    ]
    dots = [
        Dot(
            x=c.costs.vector_memory_mb,
            y=c.metrics[name],
            title=f"{c.label}: {name} {c.metrics[name]:.4f}, {c.costs.vector_memory_mb:.3g} MB",
            fill="#d73a49" if c.label == report.best else "#1f6feb",
            label=c.label,
            ring="#2da44e" if c.label == report.recommended else None,
        )
        for c in configs
    ]
    return scatter_svg(
        dots, x_label="vector memory (MB)", y_label=name, width=560, height=340, pad=56
    )


def render_html(report: ChunkingReport) -> str:
    """The page (Jinja2 template ``templates/chunking.html``, autoescaped)."""
    import jinja2
    from markupsafe import Markup

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"), autoescape=True
    )
    k, b = report.k, report.token_budget
    columns = [
        f"span_recall@{k}",
        f"span_iou@{k}",
        "span_precision_omega",
        f"span_recall@{b}t",
        f"span_iou@{b}t",
        "ndcg@10",
    ]
    return env.get_template("chunking.html").render(
        report=report,
        columns=columns,
        plot=Markup(quality_cost_svg(report)),  # noqa: S704
    )


def write_html(report: ChunkingReport, path: Path) -> None:
    from ragsonde.outputs import write_text

    write_text(path, render_html(report))
