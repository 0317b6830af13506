"""``history trend METRIC``: the metric run after run, its bootstrap band, and what changed.

:func:`trend` reads the points (one indexed query), :func:`sparkline` draws them in a terminal
line, :func:`write_svg` writes the plot: the values, the per-run 95 % bands (recorded with each
run, :func:`~ragsonde.history.record.confidence_bands`), an estimated run's own 95 % interval
(``eval --estimate``: a bar, and a band across consecutive estimated runs), and a mark on every
run whose fingerprint differs from the run before, titled with the fields that changed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from html import escape
from pathlib import Path

from ragsonde.errors import QueryValidationError
from ragsonde.history.damage import HistoryFileError
from ragsonde.history.models import Fingerprint, Trend, TrendPoint
from ragsonde.history.record import BAND_CONFIDENCE
from ragsonde.history.store import HistoryStore
from ragsonde.models.estimate import MetricEstimate

__all__ = ["describe", "sparkline", "trend", "write_svg"]

_BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float]) -> str:
    """One character per value, scaled between the smallest and the largest."""
    if not values:
        return ""
    low, high = min(values), max(values)
    span = high - low
    return "".join(
        _BARS[int((v - low) / span * (len(_BARS) - 1)) if span else len(_BARS) // 2] for v in values
    )


def _flat(raw: str) -> dict[str, object]:
    return Fingerprint.model_validate(json.loads(raw)).flat()


def trend(
    hs: HistoryStore,
    metric: str,
    *,
    benchmark: str | None = None,
    collection: str | None = None,
) -> Trend:
    """``metric`` over the recorded runs (filtered), oldest first."""
    rows = hs.trend_rows(metric, benchmark=benchmark, collection=collection)
    if not rows:
        raise QueryValidationError(
            f"no recorded run has {metric!r}"
            + (f" (benchmark {benchmark})" if benchmark else "")
            + (f" (collection {collection})" if collection else "")
            + f" in history {hs.path}.",
            field="metric",
        )
    points: list[TrendPoint] = []
    before: dict[str, object] | None = None
    last_raw = ""
    for run_id, created, value, low, high, raw, interval in rows:
        changed: list[str] = []
        if raw != last_raw:  # identical fingerprints (the common case) are not parsed twice
            try:
                flat = _flat(raw)
            except ValueError as e:  # a recorded fingerprint edited or cut short
                what = f"damaged: run {run_id}'s fingerprint cannot be read ({e})"
                raise HistoryFileError(hs.path, what) from e
            if before is not None:
                changed = sorted(
                    k for k in flat.keys() | before.keys() if flat.get(k) != before.get(k)
                )
            before, last_raw = flat, raw
        points.append(
            TrendPoint(
                run_id=run_id,
                created_at=created,
                value=value,
                ci_low=low,
                ci_high=high,
                changed=changed,
                interval=interval,
            )
        )
    return Trend(
        metric=metric,
        confidence=BAND_CONFIDENCE,
        points=points,
        sparkline=sparkline([p.value for p in points]),
    )


def svg(t: Trend, width: int = 720, height: int = 260) -> str:
    """The trend as a standalone SVG: band, line, points (changes marked in red)."""
    pad = 40
    pts = t.points
    low = min(min(p.ci_low, p.interval.low if p.interval else p.ci_low) for p in pts)
    high = max(max(p.ci_high, p.interval.high if p.interval else p.ci_high) for p in pts)
    span = (high - low) or 1.0

    def x(i: int) -> float:
        return pad + (i * (width - 2 * pad) / max(len(pts) - 1, 1))

    def y(v: float) -> float:
        return height - pad - (v - low) / span * (height - 2 * pad)

    upper = [f"{x(i):.1f},{y(p.ci_high):.1f}" for i, p in enumerate(pts)]
    lower = [f"{x(i):.1f},{y(p.ci_low):.1f}" for i, p in reversed(list(enumerate(pts)))]
    line = " ".join(f"{x(i):.1f},{y(p.value):.1f}" for i, p in enumerate(pts))
    marks = []
    for i, p in enumerate(pts):
        what = "; ".join(p.changed) if p.changed else "no change"
        color = "#c0392b" if p.changed else "#2c3e50"
        est = f"; {describe(p.interval)}" if p.interval else ""
        title = escape(
            f"run {p.run_id}: {p.value:.4f} [{p.ci_low:.4f}, {p.ci_high:.4f}]{est} — {what}"
        )
        if p.interval is not None:  # the estimate's interval: a bar, the band joins them
            e = p.interval
            marks.append(
                f'<line class="interval" data-run="{p.run_id}" x1="{x(i):.1f}" x2="{x(i):.1f}" '
                f'y1="{y(e.low):.1f}" y2="{y(e.high):.1f}" stroke="#d35400" stroke-width="3">'
                f"<title>{escape(describe(e))}</title></line>"
            )
        marks.append(
            f'<circle class="run" data-run="{p.run_id}" cx="{x(i):.1f}" cy="{y(p.value):.1f}" '
            f'r="4" fill="{color}"><title>{title}</title></circle>'
        )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">'
        f'<text x="{pad}" y="16">{escape(t.metric)} per run, {t.confidence:.0%} bootstrap band '
        "(blue), estimates' 95 % intervals (orange); red: the fingerprint changed</text>"
        f'<polygon points="{" ".join(upper + lower)}" fill="#3498db" fill-opacity="0.2"/>'
        + _estimate_band(pts, x, y)
        + f'<polyline points="{line}" fill="none" stroke="#2980b9" stroke-width="1.5"/>'
        f'<text x="4" y="{y(high):.1f}">{high:.3f}</text>'
        f'<text x="4" y="{y(low):.1f}">{low:.3f}</text>' + "".join(marks) + "</svg>\n"
    )


def describe(e: MetricEstimate) -> str:
    """``estimate 0.6512 [0.6011, 0.7013] (cross-ppi++, 20 labelled + 26 predicted)``."""
    rests = f"{e.n_labeled} labelled" + (f" + {e.n_predicted} predicted" if e.n_predicted else "")
    return f"estimate {e.estimate:.4f} [{e.low:.4f}, {e.high:.4f}] ({e.method}, {rests})"


def _estimate_band(
    pts: list[TrendPoint], x: Callable[[int], float], y: Callable[[float], float]
) -> str:
    """The estimates' 95 % band over each run of consecutive estimated points."""
    out, run = [], []
    for i, p in [*enumerate(pts), (len(pts), None)]:
        if p is not None and p.interval is not None:
            run.append((i, p.interval))
            continue
        if run:
            upper = [f"{x(j):.1f},{y(e.high):.1f}" for j, e in run]
            lower = [f"{x(j):.1f},{y(e.low):.1f}" for j, e in reversed(run)]
            out.append(
                f'<polygon class="estimate-band" points="{" ".join(upper + lower)}" '
                'fill="#e67e22" fill-opacity="0.25"/>'
            )
            run = []
    return "".join(out)


def write_svg(t: Trend, path: Path) -> Path:
    from ragsonde.outputs import write_text

    write_text(path, svg(t))
    return path
