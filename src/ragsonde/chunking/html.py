"""The chunking report as one HTML page: the table, and quality against cost as inline SVG."""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

from ragsonde.chunking.report import ChunkingReport, ConfigResult
from ragsonde.errors import QueryValidationError

__all__ = ["quality_cost_svg", "render_html", "write_html"]

_W, _H, _PAD = 560, 340, 56


def quality_cost_svg(report: ChunkingReport, metric: str | None = None) -> str:
    """``metric`` (default: the primary) against vector memory, one labelled dot per
    configuration; the best filled red, the recommended ringed."""
    name = metric or report.primary
    configs: list[ConfigResult] = [
        c for c in report.configurations if math.isfinite(c.metrics.get(name, math.nan))
    ]
    if not configs:
        return ""
    xs = [c.costs.vector_memory_mb for c in configs]
    ys = [c.metrics[name] for c in configs]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    x1 = x1 if x1 > x0 else x0 + 1.0
    y1 = y1 if y1 > y0 else y0 + 0.01

    def px(v: float) -> float:
        return _PAD + (v - x0) / (x1 - x0) * (_W - 2 * _PAD)

    def py(v: float) -> float:
        return _H - _PAD - (v - y0) / (y1 - y0) * (_H - 2 * _PAD)

    label = escape(name)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'role="img" aria-label="{label} against vector memory">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<line x1="{_PAD}" y1="{_H - _PAD}" x2="{_W - _PAD}" y2="{_H - _PAD}" stroke="#888"/>',
        f'<line x1="{_PAD}" y1="{_PAD}" x2="{_PAD}" y2="{_H - _PAD}" stroke="#888"/>',
        f'<text x="{_W / 2}" y="{_H - 12}" text-anchor="middle" font-size="12">'
        "vector memory (MB)</text>",
        f'<text x="14" y="{_H / 2}" transform="rotate(-90 14 {_H / 2})" text-anchor="middle" '
        f'font-size="12">{label}</text>',
        f'<text x="{_PAD}" y="{_H - _PAD + 16}" text-anchor="middle" font-size="11">'
        f"{x0:.3g}</text>",
        f'<text x="{_W - _PAD}" y="{_H - _PAD + 16}" text-anchor="middle" font-size="11">'
        f"{max(xs):.3g}</text>",
        f'<text x="{_PAD - 4}" y="{_H - _PAD}" text-anchor="end" font-size="11">{y0:.3f}</text>',
        f'<text x="{_PAD - 4}" y="{_PAD + 4}" text-anchor="end" font-size="11">{y1:.3f}</text>',
    ]
    for c, x, y in zip(configs, xs, ys, strict=True):
        colour = "#d73a49" if c.label == report.best else "#1f6feb"
        title = f"<title>{escape(c.label)}: {label} {y:.4f}, {x:.3g} MB</title>"
        parts.append(
            f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="4" fill="{colour}">{title}</circle>'
        )
        parts.append(
            f'<text x="{px(x) + 6:.1f}" y="{py(y) - 6:.1f}" font-size="10">{escape(c.label)}</text>'
        )
        if c.label == report.recommended:
            parts.append(
                f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="9" fill="none" '
                'stroke="#2da44e" stroke-width="2"/>'
            )
    parts.append("</svg>")
    return "".join(parts)


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
    try:
        path.write_text(render_html(report), encoding="utf-8")
    except OSError as e:
        raise QueryValidationError(f"Cannot write {path}: {e.strerror or e}", field="html") from e
