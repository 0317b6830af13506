"""``ragsonde compare``: two saved reports in; deltas, paired significance tests, a CI gate out."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.table import Table

from ragsonde.cli._common import JsonOpt, cli_errors, console, err_console, print_json
from ragsonde.cli.app import app
from ragsonde.errors import QueryValidationError

if TYPE_CHECKING:
    from ragsonde.evaluate.compare import Comparison, MetricComparison

__all__ = ["compare_command", "no_regression_gate", "print_gate", "render_comparison"]

#: The metric ``--gate-no-regression`` watches when no ``--metric`` is named (if compared).
DEFAULT_GATE_METRIC = "ndcg@10"

_VERDICT_STYLE = {"better": "green", "worse": "red"}


def _load(path: Path) -> dict[str, Any]:
    """A report saved with ``ragsonde eval --save``; unreadable files are a validation error."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise QueryValidationError(f"cannot read report {path}: {e}", field="report") from e
    if not isinstance(data, dict):
        raise QueryValidationError(f"{path} is not a saved report (a JSON object).", field="report")
    return data


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


def _label(side: dict[str, str]) -> str:
    return " · ".join(v for v in (side.get("collection"), side.get("embedder")) if v) or "?"


def _metrics_table(comparison: Comparison) -> Table:
    table = Table(
        title=f"B vs A on {comparison.n_queries} queries\nA: {_label(comparison.a)}\n"
        f"B: {_label(comparison.b)}",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        padding=(0, 1, 0, 0),
    )
    confidence = f"{comparison.metrics[0].confidence:.0%}"
    heads = ("metric", "A", "B", "Δ", "W/T/L", "p t", "p perm", f"{confidence} CI of Δ")
    for head in heads:
        table.add_column(head, justify="left" if head == "metric" else "right", no_wrap=True)
    table.add_column("verdict", no_wrap=True)
    for m in comparison.metrics:
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


def render_comparison(comparison: Comparison) -> None:
    """The comparison as Rich tables: one row per metric, then the most-changed queries."""
    console.print(_metrics_table(comparison))
    console.print(
        "W/T/L: queries where B wins/ties/loses against A. p t: paired t-test; p perm: paired "
        f"permutation test. Significant: both p < {comparison.alpha}; "
        "n.s.: no significant difference."
    )
    if comparison.changed:
        console.print(_changed_table(comparison))
    else:
        console.print(f"no query changed on {comparison.changed_metric}.")


def _gate_metrics(comparison: Comparison, named: Sequence[str] | None) -> list[str]:
    """The named metrics, else ndcg@10 when compared, else every compared metric."""
    if named:
        return list(dict.fromkeys(named))
    if DEFAULT_GATE_METRIC in comparison.names:
        return [DEFAULT_GATE_METRIC]
    return comparison.names


def no_regression_gate(comparison: Comparison, named: Sequence[str] | None) -> dict[str, Any]:
    """``--gate-no-regression``: ``{"metrics", "regressions", "passed"}``; it fails when B is
    significantly worse than A on a watched metric (the named ones, else ndcg@10 when compared,
    else every compared metric)."""
    watched = _gate_metrics(comparison, named)
    regressions = [m.metric for m in comparison.regressions(watched)]
    return {"metrics": watched, "regressions": regressions, "passed": not regressions}


def print_gate(gate: dict[str, Any]) -> None:
    """The gate's verdict: PASS on stdout, or the regressions on stderr."""
    if gate["passed"]:
        console.print(f"[green]PASS[/] no significant regression on {', '.join(gate['metrics'])}")
    else:
        err_console.print(f"[bold red]significant regression[/]: {', '.join(gate['regressions'])}")


@app.command("compare")
@cli_errors
def compare_command(
    report_a: Annotated[Path, typer.Argument(help="The baseline report (eval --save).")],
    report_b: Annotated[Path, typer.Argument(help="The candidate report, on the same queries.")],
    metric: Annotated[
        list[str] | None,
        typer.Option("--metric", "-m", help="Metric to compare (repeatable) \\[default: all]."),
    ] = None,
    gate_no_regression: Annotated[
        bool,
        typer.Option(
            "--gate-no-regression",
            help="Exit 1 when B is significantly worse than A on a named metric "
            "(default: ndcg@10 when present, else every compared metric).",
        ),
    ] = False,
    alpha: Annotated[float, typer.Option(help="Significance level of both tests.")] = 0.05,
    resamples: Annotated[
        int, typer.Option(help="Resamples of the permutation test and the bootstrap.")
    ] = 10000,
    seed: Annotated[int, typer.Option(help="Random seed of the resampling.")] = 0,
    json_output: JsonOpt = False,
) -> None:
    """Compare two saved eval reports: deltas, W/T/L, paired t-test, permutation test, CI."""
    try:
        from ragsonde.evaluate.compare import compare_reports
    except ImportError as e:
        raise typer.BadParameter(
            f"compare needs the eval extras ({e.name} is missing): pip install 'ragsonde[eval]'"
        ) from e
    comparison = compare_reports(
        _load(report_a), _load(report_b), metric, alpha=alpha, n_resamples=resamples, seed=seed
    )
    doc = comparison.to_json()
    gate = no_regression_gate(comparison, metric) if gate_no_regression else None
    if gate is not None:
        doc["gate"] = gate
    if json_output:
        print_json(doc)
    else:
        render_comparison(comparison)
    if gate is not None and (not json_output or not gate["passed"]):
        print_gate(gate)
    if gate is not None and not gate["passed"]:
        raise typer.Exit(1)
