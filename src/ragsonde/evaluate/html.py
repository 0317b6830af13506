"""One self-contained HTML report (inline CSS and SVG; no script, no CDN: it opens offline).

Plots: metric@k curves, a latency histogram per stage, the distribution of per-query scores, and
the worst queries with what was expected and what came back; tables of metrics per filter and per
``--by`` group when the report has them. Every value from the benchmark or the store is escaped:
stored documents are untrusted input.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any

from ragsonde.evaluate.breakdown import headline_metrics

__all__ = ["render_html_report", "write_html_report"]

_W, _H, _PAD = 520, 240, 40
_COLORS = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2"]
_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#111;
padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ddd;padding:4px 8px;
text-align:right;vertical-align:top}th{background:#f5f5f5}td.l,th.l{text-align:left}
.grid{display:flex;flex-wrap:wrap;gap:1rem}figure{margin:0}figcaption{font-weight:600}
.pass{color:#059669;font-weight:600}.fail{color:#dc2626;font-weight:600}.muted{color:#666}
svg text{font:11px system-ui,sans-serif}code{background:#f3f3f3;padding:0 3px}
"""


def _axes(y_max: float, x_labels: Sequence[str]) -> list[str]:
    parts = [
        f'<line x1="{_PAD}" y1="{_H - _PAD}" x2="{_W - 10}" y2="{_H - _PAD}" stroke="#999"/>',
        f'<line x1="{_PAD}" y1="10" x2="{_PAD}" y2="{_H - _PAD}" stroke="#999"/>',
    ]
    for i in range(5):
        v = y_max * i / 4
        y = _H - _PAD - (_H - _PAD - 10) * i / 4
        parts.append(f'<text x="{_PAD - 4}" y="{y + 4:.1f}" text-anchor="end">{v:.3g}</text>')
    step = (_W - _PAD - 20) / max(len(x_labels), 1)
    every = max(1, math.ceil(len(x_labels) / 12))
    for i, label in enumerate(x_labels):
        if i % every == 0:
            x = _PAD + step * (i + 0.5)
            y = _H - _PAD + 14
            parts.append(f'<text x="{x:.1f}" y="{y}" text-anchor="middle">{escape(label)}</text>')
    return parts


def line_chart(series: Mapping[str, Sequence[float]], x_labels: Sequence[str], y_max: float) -> str:
    """Lines over shared x labels, with a legend."""
    y_max = y_max or 1.0
    parts = _axes(y_max, x_labels)
    step = (_W - _PAD - 20) / max(len(x_labels), 1)
    for n, (name, values) in enumerate(series.items()):
        color = _COLORS[n % len(_COLORS)]
        points = " ".join(
            f"{_PAD + step * (i + 0.5):.1f},{_H - _PAD - (_H - _PAD - 10) * v / y_max:.1f}"
            for i, v in enumerate(values)
        )
        parts.append(
            f'<polyline class="series" fill="none" stroke="{color}" stroke-width="2" '
            f'points="{points}"/>'
        )
        parts.append(f'<text x="{_W - 110}" y="{20 + 14 * n}" fill="{color}">{escape(name)}</text>')
    return f'<svg class="plot" width="{_W}" height="{_H}" role="img">{"".join(parts)}</svg>'


def bar_chart(counts: Sequence[int], x_labels: Sequence[str], color: str = "#2563eb") -> str:
    """A histogram from bin counts."""
    y_max = float(max(counts, default=0)) or 1.0
    parts = _axes(y_max, x_labels)
    step = (_W - _PAD - 20) / max(len(counts), 1)
    for i, c in enumerate(counts):
        h = (_H - _PAD - 10) * c / y_max
        x = _PAD + step * i + 1
        parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{_H - _PAD - h:.1f}" width="{max(step - 2, 1):.1f}" '
            f'height="{h:.1f}" fill="{color}"><title>{escape(x_labels[i])}: {c}</title></rect>'
        )
    return f'<svg class="plot" width="{_W}" height="{_H}" role="img">{"".join(parts)}</svg>'


def _histogram(
    values: Sequence[float], bins: int, lo: float, hi: float
) -> tuple[list[int], list[str]]:
    hi = hi if hi > lo else lo + 1.0
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(int((v - lo) / width), bins - 1)] += 1
    return counts, [f"{lo + width * i:.3g}" for i in range(bins)]


def _metric_section(report: Mapping[str, Any]) -> str:
    metrics: Mapping[str, float] = report["metrics"]
    ks: list[int] = report["ks"]
    families = list(dict.fromkeys(n.split("@")[0] for n in metrics if "@" in n))
    series = {f: [metrics.get(f"{f}@{k}", 0.0) for k in ks] for f in families}
    rows = "".join(
        f'<tr><th class="l">{escape(f)}</th>' + "".join(f"<td>{v:.4f}</td>" for v in vals) + "</tr>"
        for f, vals in series.items()
    )
    head = "".join(f"<th>@{k}</th>" for k in ks)
    chart = line_chart(series, [f"@{k}" for k in ks], 1.0)
    return (
        '<h2>Metrics</h2><table id="metrics">'
        f'<tr><th class="l">metric</th>{head}</tr>{rows}</table>'
        f"<figure><figcaption>metric@k</figcaption>{chart}</figure>"
    )


def _latency_section(report: Mapping[str, Any]) -> str:
    per_query = report["per_query"].values()
    rows = "".join(
        f'<tr><th class="l">{escape(stage)}</th>'
        + "".join(f"<td>{p[x]:.2f}</td>" for x in ("p50", "p95", "p99", "mean"))
        + "</tr>"
        for stage, p in report["latency"].items()
    )
    figures = []
    for n, stage in enumerate(report["latency"]):
        values = [float(q.get("timings", {}).get(stage, 0.0)) for q in per_query]
        if not values:
            continue
        counts, labels = _histogram(values, 20, 0.0, max(values))
        chart = bar_chart(counts, labels, _COLORS[n % len(_COLORS)])
        figures.append(f"<figure><figcaption>{escape(stage)}</figcaption>{chart}</figure>")
    thr = report.get("throughput") or {}
    extra = (
        f"<p>Batched throughput: <b>{thr['queries_per_s']:.1f}</b> queries/s "
        f"(batches of {int(thr['batch_size'])}).</p>"
        if thr
        else ""
    )
    return (
        "<h2>Latency (ms, one query at a time, embedding included)</h2>"
        f'<table id="latency"><tr><th class="l">stage</th><th>p50</th><th>p95</th><th>p99</th>'
        f'<th>mean</th></tr>{rows}</table>{extra}<div class="grid">{"".join(figures)}</div>'
    )


def _distribution_section(report: Mapping[str, Any], metric: str) -> str:
    values = [q.get("metrics", {}).get(metric, 0.0) for q in report["per_query"].values()]
    counts, labels = _histogram(values, 10, 0.0, 1.0)
    return (
        f"<h2>Per-query {escape(metric)}</h2><figure><figcaption>how many queries score what"
        f"</figcaption>{bar_chart(counts, labels, '#059669')}</figure>"
    )


def _worst_section(report: Mapping[str, Any], metric: str, n: int = 15) -> str:
    per_query = report["per_query"]
    worst = sorted(per_query.items(), key=lambda kv: kv[1].get("metrics", {}).get(metric, 0.0))
    worst = worst[:n]
    rows = []
    for qid, q in worst:
        relevant = set(q.get("relevant", {}))
        got = "".join(
            f"<li{' class=pass' if d in relevant else ''}>{escape(str(d))} "
            f'<span class="muted">{s:.3f}</span></li>'
            for d, s in q.get("retrieved", [])
        )
        rows.append(
            f'<tr><td class="l">{escape(qid)}</td><td class="l">{escape(q.get("query", ""))}</td>'
            f"<td>{q.get('metrics', {}).get(metric, 0.0):.3f}</td>"
            f'<td class="l">{escape(", ".join(map(str, relevant)))}</td>'
            f'<td class="l"><ol>{got}</ol></td></tr>'
        )
    return (
        f'<h2>Worst queries by {escape(metric)}</h2><table id="worst"><tr><th class="l">id</th>'
        f'<th class="l">query</th><th>{escape(metric)}</th><th class="l">expected</th>'
        f'<th class="l">retrieved (top {10})</th></tr>{"".join(rows)}</table>'
    )


def _sweep_section(report: Mapping[str, Any]) -> str:
    sweep = report.get("threshold_sweep")
    if not sweep:
        return ""
    rows = sweep["rows"]
    labels = [f"{r['threshold']:g}" for r in rows]
    series = {
        name: [r[name] for r in rows] for name in ("precision", "recall", "f1", "no_result_share")
    }
    best, safe = sweep["best_f1"], sweep["recall_preserving"]
    return (
        "<h2>Score threshold calibration</h2>"
        f"<figure><figcaption>precision, recall, F1 and queries left empty by threshold"
        f"</figcaption>{line_chart(series, labels, 1.0)}</figure>"
        f"<p>Best F1 {best['f1']:.3f} at threshold <b>{best['threshold']:g}</b>. Highest threshold "
        f"keeping recall within {sweep['max_recall_loss']:.0%}: <b>{safe['threshold']:g}</b> "
        f"(<code>{escape(sweep['recommended_setting'])}</code>).</p>"
    )


def _group_table(
    table_id: str, groups: Mapping[str, Mapping[str, Any]], report: Mapping[str, Any]
) -> str:
    names = headline_metrics(report["metrics"], report.get("gates", []))
    head = "".join(f"<th>{escape(n)}</th>" for n in names)
    overall = report["integrity"]["counts"].get("filter_violated", 0)
    rows = [
        f'<tr><th class="l">all</th><td>{report["n_queries"]}</td>'
        + "".join(f"<td>{report['metrics'][n]:.4f}</td>" for n in names)
        + f'<td></td><td>{overall}</td><td class="l"></td></tr>'
    ]
    for label, g in groups.items():
        bad = g["filter_violations"]
        ids = list(g["query_ids"])
        shown = ", ".join(ids[:10]) + (" …" if len(ids) > 10 else "")
        rows.append(
            f'<tr><td class="l">{escape(label)}</td><td>{g["queries"]}</td>'
            + "".join(f"<td>{float(g['metrics'].get(n, 0.0)):.4f}</td>" for n in names)
            + f"<td>{g['empty_results']}</td>"
            + f"<td{' class=fail' if bad else ''}>{bad}</td>"
            + f'<td class="l muted">{escape(shown)}</td></tr>'
        )
    return (
        f'<table id="{table_id}"><tr><th class="l">group</th><th>queries</th>{head}'
        f'<th>no results</th><th>filter violations</th><th class="l">query ids</th></tr>'
        f"{''.join(rows)}</table>"
    )


def _breakdown_section(report: Mapping[str, Any]) -> str:
    bd = report.get("breakdown")
    if not bd:
        return ""
    parts = ["<h2>Breakdown</h2>"]
    if bd.get("filters"):
        parts.append("<p>By the filters the queries carry (each query runs with its own).</p>")
        parts.append(_group_table("breakdown-filters", bd["filters"]["groups"], report))
    if bd.get("by"):
        by = bd["by"]
        depth = f", depth {by['depth']}" if by.get("depth") else ""
        parts.append(
            f"<p>By <code>{escape(str(by['field']))}</code>{escape(depth)}: "
            f"{escape(str(by['rule']))}.</p>"
        )
        parts.append(_group_table("breakdown-by", by["groups"], report))
    return "".join(parts)


def _summary(report: Mapping[str, Any]) -> str:
    gates = "".join(
        f'<li class="{"pass" if g["passed"] else "fail"}">{"PASS" if g["passed"] else "FAIL"} '
        f"<code>{escape(g['gate'])}</code> (value {escape(str(g['value']))})</li>"
        for g in report.get("gates", [])
    )
    integ = report["integrity"]
    bad = ", ".join(f"{escape(k)}: {v}" for k, v in integ["counts"].items() if v) or "none"
    missing = report["benchmark"].get("relevant_missing_from_collection", [])
    search = report.get("search", {})
    return (
        f"<p>Collection <b>{escape(report['collection'])}</b>, embedder "
        f"<b>{escape(report['embedder'])}</b>, {report['n_queries']} queries, relevance by "
        f"{escape(report['relevance_by'])}, search {escape(str(search.get('index', '')))} "
        f"({escape(str(search.get('mode', '')))}) on {escape(str(search.get('backend', '')))}.</p>"
        f"<p>Integrity: {integ['checked_results']} results checked, {integ['problems']} problems "
        f"({bad}). Relevant ids missing from the collection: {len(missing)}.</p>"
        + (f"<h2>Gates</h2><ul>{gates}</ul>" if gates else "")
    )


def render_html_report(report: Mapping[str, Any]) -> str:
    """The report JSON (as ``--save`` writes it) as one HTML page."""
    metric = "ndcg@10" if "ndcg@10" in report["metrics"] else next(iter(report["metrics"]))
    body = (
        _summary(report)
        + _metric_section(report)
        + _breakdown_section(report)
        + _latency_section(report)
        + _distribution_section(report, metric)
        + _sweep_section(report)
        + _worst_section(report, metric)
    )
    title = f"ragsonde report: {report['dataset']}"
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>'
        f"<style>{_CSS}</style></head><body><h1>{escape(title)}</h1>"
        f'<p class="muted">{escape(report.get("created_at", ""))}</p>{body}</body></html>'
    )


def write_html_report(report: Mapping[str, Any], path: Path) -> None:
    path.write_text(render_html_report(report), encoding="utf-8")
