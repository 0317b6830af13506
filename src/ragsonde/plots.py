"""Scatter plots as inline SVG: a quality against a cost, one dot per configuration.

The tune report (nDCG@10 against latency and memory) and the chunking report (span recall
against memory) draw the same plot: a framed pair of axes, the extremes written at their ends,
and dots with a tooltip, an optional label beside them and an optional ring (the
recommendation). Plain SVG text, no JavaScript and no plotting library, so a report is one file
that renders anywhere, a README included (the background is white for dark themes).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["Dot", "scatter_svg"]

#: A cost axis is drawn in log10 when its values span more than this ratio (memory: 1/32 to 1×).
LOG_SPREAD = 20


@dataclass(frozen=True)
class Dot:
    """One point: where, its tooltip, its colour; ``label`` is written beside it, ``ring``
    (a colour) circles it."""

    x: float
    y: float
    title: str
    fill: str
    radius: float = 4
    label: str | None = None
    ring: str | None = None


def scatter_svg(
    dots: Sequence[Dot],
    *,
    x_label: str,
    y_label: str,
    width: int = 480,
    height: int = 300,
    pad: int = 48,
) -> str:
    """``dots`` (drawn in order: later ones on top) as one ``<svg>`` element; ``""`` for none.
    The x axis is logarithmic when its values are positive and span more than
    :data:`LOG_SPREAD` times."""
    if not dots:
        return ""
    raw = [d.x for d in dots]
    log = min(raw) > 0 and max(raw) / min(raw) > LOG_SPREAD

    def tx(v: float) -> float:
        return math.log10(v) if log else v

    xs = [tx(v) for v in raw]
    ys = [d.y for d in dots]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    x1 = x1 if x1 > x0 else x0 + 1.0
    y1 = y1 if y1 > y0 else y0 + 0.01

    def px(v: float) -> float:
        return pad + (tx(v) - x0) / (x1 - x0) * (width - 2 * pad)

    def py(v: float) -> float:
        return height - pad - (v - y0) / (y1 - y0) * (height - 2 * pad)

    xl, yl = escape(x_label), escape(y_label)
    bottom, middle = height - pad, height / 2
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{yl} against {xl}">',
        '<rect width="100%" height="100%" fill="white"/>',
        f'<line x1="{pad}" y1="{bottom}" x2="{width - pad}" y2="{bottom}" stroke="#888"/>',
        f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{bottom}" stroke="#888"/>',
        f'<text x="{width / 2}" y="{height - 12}" text-anchor="middle" font-size="12">{xl}</text>',
        f'<text x="14" y="{middle}" transform="rotate(-90 14 {middle})" text-anchor="middle" '
        f'font-size="12">{yl}</text>',
        f'<text x="{pad}" y="{bottom + 16}" text-anchor="middle" font-size="11">'
        f"{min(raw):.3g}</text>",
        f'<text x="{width - pad}" y="{bottom + 16}" text-anchor="middle" font-size="11">'
        f"{max(raw):.3g}{' (log)' if log else ''}</text>",
        f'<text x="{pad - 4}" y="{bottom}" text-anchor="end" font-size="11">{y0:.3f}</text>',
        f'<text x="{pad - 4}" y="{pad + 4}" text-anchor="end" font-size="11">{y1:.3f}</text>',
    ]
    for d in dots:
        cx, cy = px(d.x), py(d.y)
        parts.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{d.radius:g}" fill="{d.fill}">'
            f"<title>{escape(d.title)}</title></circle>"
        )
        if d.label is not None:  # beside the dot, towards the middle: never past the edge
            left = cx > width / 2
            anchor = ' text-anchor="end"' if left else ""
            parts.append(
                f'<text x="{cx - 6 if left else cx + 6:.1f}" y="{cy - 6:.1f}" font-size="10"'
                f"{anchor}>{escape(d.label)}</text>"
            )
        if d.ring is not None:
            parts.append(
                f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{d.radius + 5:g}" fill="none" '
                f'stroke="{d.ring}" stroke-width="2"/>'
            )
    parts.append("</svg>")
    return "".join(parts)
