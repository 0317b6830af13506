"""The terminal view of the miss ladder: the stage histogram and the worst queries
(``eval --explain``), and one query's ladder step by step (``ragsonde explain``).

Reads :class:`~ragsonde.evaluate.misses.MissesReport` only; nothing here computes a result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ragsonde.cli._common import console

if TYPE_CHECKING:
    from ragsonde.evaluate.misses import Miss, MissesReport, QueryMisses

__all__ = ["render_ladder", "render_misses"]

_BAR = 30
_WORST = 10
_OUTCOME_STYLE = {
    "blamed": "bold red",
    "passed": "green",
    "not_applicable": "dim",
    "not_measurable": "yellow",
}


def _evidence(m: Miss) -> str:
    return ", ".join(f"{k}={v}" for k, v in m.evidence.items() if v is not None)


def render_misses(section: MissesReport, worst: int = _WORST) -> None:
    """Missed pairs per stage as a histogram, what cannot be measured here, retrievability, and
    the worst queries with each missed document's stage and evidence."""
    table = Table(title=f"why relevant documents missed the top {section.k}")
    table.add_column("stage")
    table.add_column("pairs", justify="right")
    table.add_column("share", justify="right")
    table.add_column("", width=_BAR)
    top = max(section.counts.values(), default=0) or 1
    for stage, n in section.counts.items():
        share = n / section.pairs if section.pairs else 0.0
        label = stage + (" (not measurable here)" if stage in section.not_measurable else "")
        bar = Text("█" * round(_BAR * n / top), style="red" if n else "dim")
        table.add_row(label, str(n), f"{share:.0%}", bar)
    console.print(table)
    console.print(f"[dim]{escape(section.note)}[/]")
    for stage, why in section.not_measurable.items():
        console.print(f"[yellow]not measurable here[/]: {stage}: {escape(why)}")
    for qid, why in section.unexplained_queries.items():
        console.print(f"[yellow]not explained[/]: {escape(qid)}: {escape(why)}")
    for qid, docs in section.not_reproduced.items():
        console.print(
            f"[yellow]not reproduced[/] (within k in the ladder's own search, not counted): "
            f"{escape(qid)}: {escape(', '.join(docs))}"
        )
    r = section.retrievability
    if r is not None:
        console.print(
            f"retrievability@{r.k} over {r.documents} documents and {r.queries} queries: "
            f"Gini {r.gini:.3f}, {r.dead} dead ({r.dead_share:.1%}) never in any top {r.k}"
        )
        for group in r.by_field:
            parts = ", ".join(
                f"{escape(v)} {dead}/{n}" for v, (n, dead) in list(group.values.items())[:6]
            )
            console.print(f"  dead by {escape(group.field)}: {parts}")
    rows = section.worst(worst)
    if not rows:
        return
    t = Table(title=f"worst queries ({len(rows)} of {len(section.per_query)} with misses)")
    t.add_column("query")
    t.add_column("missed document → stage (evidence; ranks 1-based)", ratio=2)
    for qid, q in rows:
        lines = Text()
        for m in q.misses:
            lines.append(f"{m.doc_id}", style="bold")
            lines.append(f" → {m.stage}", style="red")
            lines.append(f" ({_evidence(m)})\n", style="dim")
        t.add_row(Text(f"{qid}: {q.query}"), lines)
    console.print(t)
    console.print(f"[dim]{section.searches} searches, {section.seconds:.2f} s[/]")


def render_ladder(qid: str, q: QueryMisses, k: int) -> None:
    """One query: the relevant documents found, then each missed one up the ladder."""
    console.print(f"[bold]{escape(qid)}[/]: {escape(q.query)}")
    found = ", ".join(f"{d} (rank {r})" for d, r in q.found.items()) or "none"
    console.print(f"relevant in the top {k}: {found}; missed: {len(q.misses)}")
    for m in q.misses:
        table = Table(title=f"{m.doc_id}: blamed on {m.stage}", title_justify="left")
        table.add_column("#", justify="right")
        table.add_column("stage")
        table.add_column("outcome")
        table.add_column("what was checked", ratio=1)
        for i, step in enumerate(m.steps, start=1):
            style = _OUTCOME_STYLE[step.outcome]
            table.add_row(str(i), step.stage, Text(step.outcome, style=style), Text(step.detail))
        console.print(table)
        if m.best_chunk:
            console.print(f"[dim]best chunk:[/] {escape(m.best_chunk)}")
