"""The CLI's one renderer: query responses, evaluation reports, comparisons and gates.

Every function reads the typed models of :mod:`ragsonde.evaluate.report` and
:mod:`ragsonde.evaluate.comparison`; nothing here computes a result.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ragsonde.cli._common import console, err_console
from ragsonde.models import Response
from ragsonde.models.params import SearchParams

if TYPE_CHECKING:
    from ragsonde.evaluate.comparison import (
        Comparison,
        MetricComparison,
        NoRegressionGate,
        ReportRef,
    )
    from ragsonde.evaluate.report import EvalReport, GroupSummary

__all__ = [
    "metrics_table",
    "render_comparison",
    "render_gate",
    "render_report",
    "render_response",
    "render_side",
]

_VERDICT_STYLE = {"better": "green", "worse": "red", "not comparable": "yellow"}
_MISSING_SHOWN = 10
_BAR = 20


def _score_bar(score: float) -> Text:
    filled = round(score * _BAR)
    return Text("█" * filled, style="green") + Text("░" * (_BAR - filled), style="dim")


def render_response(
    resp: Response, model_load_ms: float | None = None, *, filters: Mapping[str, Any] | None = None
) -> None:
    """A response as a table, then its timings; the model load (once per process) on its own
    line, so ``embed`` is the encode alone; ``filters``: the query's, named with its search
    (they were applied, and not said)."""
    if resp.status == "error" and resp.error is not None:
        err_console.print(f"[bold red]{resp.error.code.value}[/]: {escape(resp.error.message)}")
        return
    table = Table(title=f"“{resp.query}” → {resp.collection}", show_lines=True, expand=True)
    table.add_column("#", justify="right", width=3)
    table.add_column("score", width=_BAR + 7)
    table.add_column("source", ratio=1)
    table.add_column("text", ratio=2)
    for r in resp.results:
        source = Text()
        if r.title:
            source.append(r.title, style="bold")
        if r.section:
            source.append(f"\n{r.section}", style="italic")
        if r.url:
            source.append(f"\n{r.url}", style="cyan")
        snippet = r.text if len(r.text) <= 300 else r.text[:300] + "…"
        table.add_row(
            str(r.rank + 1),  # 1-based, as the web page shows it
            _score_bar(r.similarity_score) + Text(f" {r.similarity_score:.3f}"),
            source,
            Text(snippet),
        )
    if resp.results:
        console.print(table)
    else:
        console.print(f"No results for “{resp.query}” (threshold filters or an empty collection).")
    t = resp.timings
    console.print(
        f"[dim]{resp.total_results} results · embed {t.embedding_ms:.1f} ms · search "
        f"{t.search_ms:.1f} ms · post {t.post_processing_ms:.1f} ms · total {t.total_ms:.1f} ms"
        f" · {resp.model}[/]"
    )
    if resp.search is not None:
        line = _params_line(resp.search)
        if filters:
            line += " · filters " + json.dumps(dict(filters), ensure_ascii=False)
        console.print(f"[dim]search: {escape(line)}[/]")
    if model_load_ms:
        console.print(f"[dim]model load {model_load_ms:.0f} ms (once per process, not in embed)[/]")


def _params_line(p: SearchParams) -> str:
    """The parameters a search ran with, the ones at their defaults left out."""
    defaults = SearchParams()
    shown = [f"mode {p.mode}" + (f" ({p.fusion_label})" if p.fusion_label else "")]
    for name in ("top_k", "score_threshold", "hnsw_ef", "exact", "quantization_rescore"):
        value = getattr(p, name)
        if value != getattr(defaults, name):
            shown.append(f"{name} {value}")
    if p.quantization_oversampling is not None:
        shown.append(f"quantization_oversampling {p.quantization_oversampling}")
    return " · ".join(shown)


def _search_line(report: EvalReport) -> str:
    """The search that ran, in a few words: mode (fusion), index, and every knob set."""
    s = report.search
    words = [s.mode + (f" {s.fusion}" if s.fusion else ""), s.index]
    p = s.params
    if p is not None:
        knobs = {
            "hnsw_ef": p.hnsw_ef,
            "rescore": p.quantization_rescore,
            "oversampling": p.quantization_oversampling,
            "threshold": p.score_threshold or None,
        }
        words += [f"{k} {v}" for k, v in knobs.items() if v is not None]
    return " · ".join(words)


def render_report(report: EvalReport) -> None:
    """The report as Rich tables: metrics by k, latency by stage, integrity, gates."""
    families = list(dict.fromkeys(name.split("@")[0] for name in report.metrics if "@" in name))
    labelled = sum(1 for q in report.per_query.values() if q.relevant)
    counted = (  # a partly labelled benchmark's metrics are the labelled queries' means
        f"means of {labelled} labelled of {report.n_queries} queries"
        if 0 < labelled < report.n_queries
        else f"{report.n_queries} queries"
    )
    table = Table(
        title=f"{counted} · {report.collection} · {report.embedder} · "
        f"{_search_line(report)} · relevance by {report.relevance_by}"
    )
    table.add_column("metric")
    for k in report.ks:
        table.add_column(f"@{k}", justify="right")
    for fam in families:
        table.add_row(
            fam, *(f"{report.metrics.get(f'{fam}@{k}', float('nan')):.4f}" for k in report.ks)
        )
    spans = report.spans.metrics if report.spans is not None else {}
    for fam in dict.fromkeys(n.split("@")[0] for n in spans if "@" in n):
        table.add_row(fam, *(f"{spans.get(f'{fam}@{k}', float('nan')):.4f}" for k in report.ks))
    console.print(table)
    from ragsonde.evaluate.coverage import coverage_note

    note = coverage_note(report)
    if note is not None:
        console.print(f"[dim]{note}[/]")
    if report.metrics_ci:
        from ragsonde.cli._estimate import render_estimates

        render_estimates(report.metrics_ci)  # the table above: the labelled queries' means
    if "mrr" in report.metrics:
        console.print(f"MRR (uncut): {report.metrics['mrr']:.4f}")
    if "span_precision_omega" in spans:
        console.print(f"span precision_omega: {spans['span_precision_omega']:.4f}")
    if report.spans is not None and not report.spans.available:
        console.print(f"[yellow]{report.spans.note}[/]")
    lat = Table(title="latency per query (ms), one query at a time, embedding included")
    for col in ("stage", "p50", "p95", "p99", "mean"):
        lat.add_column(col, justify="right" if col != "stage" else "left")
    stages = report.latency.stages()
    whole = stages.get("total_ms")
    unmeasured = [
        stage
        for stage, p in stages.items()
        if stage != "total_ms" and whole is not None and whole.mean > 0 and p.p99 == p.mean == 0
    ]
    for stage, p in stages.items():  # a stage a remote backend does not time is no real 0
        cells = (
            ["–"] * 4
            if stage in unmeasured
            else [f"{x:.2f}" for x in (p.p50, p.p95, p.p99, p.mean)]
        )
        lat.add_row(stage, *cells)
    console.print(lat)
    if unmeasured:
        console.print("(–: not measured: this backend times only the whole call)")
    if report.throughput:
        console.print(
            f"batched throughput: {report.throughput.queries_per_s:.1f} queries/s "
            f"(batches of {report.throughput.batch_size})"
        )
    integ = report.integrity
    bad = {k: v for k, v in integ.counts.items() if v}
    if integ.checked_results == 0:  # "0 results checked, 0 problems" read as a clean bill
        console.print("integrity: not checked (no result came back with a payload to check)")
    else:
        console.print(
            f"integrity: {integ.checked_results} results checked, {integ.problems} problems"
            + (f" ({', '.join(f'{k}: {v}' for k, v in bad.items())})" if bad else "")
        )
    missing = report.benchmark.relevant_missing_from_collection
    if missing:
        more = " …" if len(missing) > _MISSING_SHOWN else ""
        console.print(
            f"[yellow]{len(missing)} relevant ids are not in the collection[/] "
            f"(scored as misses): {', '.join(missing[:_MISSING_SHOWN])}{more}"
        )
    if report.benchmark.errors:
        console.print(f"[red]{len(report.benchmark.errors)} queries failed[/]")
    for warning in report.warnings:
        console.print(f"[yellow]warning[/]: {escape(warning)}")
    if report.threshold_sweep:
        sw = report.threshold_sweep
        best, safe = sw.best_f1, sw.recall_preserving
        console.print(
            f"threshold sweep: best F1 {best.f1:.3f} at {best.threshold:g} "
            f"(precision {best.precision:.3f}, recall {best.recall:.3f}, "
            f"{best.no_result_share:.0%} queries with no result); highest threshold keeping "
            f"recall within {sw.max_recall_loss:.0%}: {safe.threshold:g} "
            f"→ [bold]{sw.recommended_setting}[/]"
        )
    if report.index_health:
        ih = report.index_health
        index = report.search.index
        console.print(
            f"index health ({index} vs exact): "
            + ", ".join(f"{k} {v}" for k, v in ih.recall_vs_exact.items())
            + f"; search p50 {ih.ann_search_ms.p50:.2f} ms vs "
            f"{ih.exact_search_ms.p50:.2f} ms exact"
        )
    _render_breakdown(report)
    for g in report.gates:
        mark = "[green]PASS[/]" if g.passed else "[red]FAIL[/]"
        value = g.value if g.value is None else round(g.value, 4)  # an interval end: 16 digits
        console.print(f"{mark} {g.gate} (value {value}" + (f", {g.on})" if g.on else ")"))


def _render_breakdown(report: EvalReport) -> None:
    """Metrics per filter and per ``--by`` group, under an ``all`` row to compare with."""
    from ragsonde.evaluate.breakdown import headline_metrics

    if report.breakdown is None:
        return
    names = headline_metrics(report.metrics, report.gates)
    parts: list[tuple[str, dict[str, GroupSummary]]] = []
    if report.breakdown.filters:
        parts.append(("by filter", report.breakdown.filters.groups))
    by = report.breakdown.by
    if by:
        depth = f":{by.depth}" if by.depth else ""
        parts.append((f"by {by.field}{depth} (of each query's most relevant item)", by.groups))
    for title, groups in parts:
        table = Table(
            title=f"metrics {title}",
            caption="n: queries · empty: queries with no result · "
            "violations: results that break the query's filters",
        )
        table.add_column("group", overflow="fold")
        for col in ("n", *names, "empty", "violations"):
            table.add_column(col, justify="right", no_wrap=True)
        violated = report.integrity.counts.get("filter_violated", 0)
        table.add_row(
            "[bold]all[/]",
            str(sum(g.queries for g in groups.values())),  # the labelled queries the means read
            *(f"{report.metrics[n]:.4f}" for n in names),
            "",
            str(violated),
        )
        for label, g in groups.items():
            bad = g.filter_violations
            table.add_row(
                escape(label),
                str(g.queries),
                *(f"{g.metrics.get(n, 0.0):.4f}" for n in names),
                str(g.empty_results),
                f"[red]{bad}[/]" if bad else "0",
            )
        console.print(table)


def render_side(side: str, report: EvalReport) -> None:
    """One side of ``eval --versus``: a rule, what was ingested, then its report."""
    console.rule(f"[bold]{side}[/]: {report.embedder} → {report.collection}")
    ingested = report.benchmark.ingested
    if ingested:
        console.print(
            f"ingested {ingested.documents} documents ({ingested.chunks} chunks) "
            f"into {report.collection}"
        )
    render_report(report)


def _p(p: float) -> str:
    return "<0.001" if p < 1e-3 else f"{p:.3f}"


def _verdict(m: MetricComparison) -> str:
    style = _VERDICT_STYLE.get(m.verdict)
    return f"[{style}]{m.verdict}[/]" if style else "n.s."


def _metric_row(m: MetricComparison) -> list[str]:
    return [
        m.metric,
        f"{m.mean_a:.3f}",
        f"{m.mean_b:.3f}",
        f"{m.delta:+.3f}",
        f"{m.wins}/{m.ties}/{m.losses}",
        _p(m.p_ttest),
        _p(m.p_permutation),
        f"{m.ci_low:+.3f}…{m.ci_high:+.3f}",
        _verdict(m),
    ]


def _metrics_table(comparison: Comparison) -> Table:
    def label(side: ReportRef) -> str:
        return " · ".join(v for v in (side.collection, side.search, side.embedder) if v) or "?"

    a, b = comparison.a, comparison.b
    return metrics_table(
        f"B vs A on {comparison.n_queries} queries\nA: {label(a)}\nB: {label(b)}",
        comparison.metrics,
    )


def metrics_table(title: str, metrics: list[MetricComparison]) -> Table:
    """One row per compared metric: means, Δ, W/T/L, both p-values, the CI and the verdict."""
    table = Table(
        title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0)
    )
    confidence = f"{metrics[0].confidence:.0%}" if metrics else ""
    heads = ("metric", "A", "B", "Δ", "W/T/L", "p t", "p perm", f"{confidence} CI of Δ")
    for head in heads:
        table.add_column(head, justify="left" if head == "metric" else "right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    for m in metrics:
        table.add_row(*_metric_row(m))
    return table


def _changed_table(comparison: Comparison) -> Table:
    table = Table(
        title=f"queries that changed most on {comparison.changed_metric}", box=box.SIMPLE_HEAD
    )
    table.add_column("query id", no_wrap=True)
    table.add_column("query", overflow="ellipsis", no_wrap=True, max_width=60)
    for head in ("A", "B", "Δ"):
        table.add_column(head, justify="right", no_wrap=True)
    for c in comparison.changed:
        table.add_row(c.query_id, c.query, f"{c.a:.3f}", f"{c.b:.3f}", f"{c.delta:+.3f}")
    return table


def _differences_table(comparison: Comparison) -> Table | None:
    """Each metric's difference B - A with its intervals: classical over the labelled queries,
    and PPI++ over every query on a partly labelled benchmark (what the verdict then follows)."""
    shown = [m for m in comparison.metrics if m.classical is not None or m.ppi is not None]
    if not shown:
        return None
    table = Table(title="B - A with 95 % intervals", box=box.SIMPLE_HEAD, show_edge=False)
    for head in ("metric", "classical (labelled queries)", "PPI++ (every query)", "method"):
        table.add_column(head, justify="left" if head in ("metric", "method") else "right")
    for m in shown:
        c, p = m.classical, m.ppi
        table.add_row(
            m.metric,
            f"{c.estimate:+.4f} [{c.low:+.4f}, {c.high:+.4f}]" if c else "-",
            f"{p.estimate:+.4f} [{p.low:+.4f}, {p.high:+.4f}]" if p else "-",
            p.method if p else "paired tests",
        )
    return table


def _rests_on(comparison: Comparison) -> str:
    """What the differences rest on: labelled queries, predicted ones and their sources."""
    m = comparison.metrics[0]
    p, c = m.ppi, m.classical
    if p is not None:
        by = f" by {', '.join(p.sources)}" if p.sources else ""
        note = f" ({p.note})" if p.note else ""
        return f"{p.method}: {p.n_labeled} labelled, {p.n_predicted} predicted{by}{note}"
    n = c.n_labeled if c is not None else comparison.n_queries
    return f"every query labelled: the paired tests and the classical interval on {n} queries"


def render_comparison(comparison: Comparison) -> None:
    """The comparison as Rich tables: one row per metric, each difference's intervals, then
    the most-changed queries."""
    console.print(_metrics_table(comparison))
    partly = any(m.ppi is not None for m in comparison.metrics)
    console.print(
        "W/T/L: queries where B wins/ties/loses against A. p t: paired t-test; p perm: paired "
        + (
            "permutation test, both on the labelled queries. Significant: the PPI++ interval "
            "of B - A over every query excludes 0; "
            if partly
            else f"permutation test. Significant: both p < {comparison.alpha}; "
        )
        + "n.s.: no significant difference."
    )
    differences = _differences_table(comparison)
    if differences is not None:
        console.print(differences)
        console.print(f"the differences rest on {_rests_on(comparison)}")
    if comparison.changed:
        console.print(_changed_table(comparison))
    else:
        console.print(f"no query changed on {comparison.changed_metric}.")
    for w in comparison.warnings:
        console.print(f"[yellow]warning[/]: {w}")


def render_gate(gate: NoRegressionGate) -> None:
    """The no-regression gate's verdict: PASS on stdout, or the regressions on stderr."""
    if gate.passed:
        console.print(f"[green]PASS[/] no significant regression on {', '.join(gate.metrics)}")
    else:
        err_console.print(f"[bold red]significant regression[/]: {', '.join(gate.regressions)}")
