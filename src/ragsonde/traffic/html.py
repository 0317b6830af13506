"""The traffic report as one HTML page (Jinja2 template ``templates/traffic.html``)."""

from __future__ import annotations

import shlex
from pathlib import Path

from ragsonde.traffic.report import QueryHealth, TrafficReport

__all__ = [
    "EVIDENCE",
    "explain_command",
    "query_command",
    "render_html",
    "shell_command",
    "write_html",
]

#: The signals shown as a weak query's evidence, in this order.
EVIDENCE = ("top1", "gap", "nqc", "rbo", "top1_pct", "results", "cut_by_threshold")


def explain_command(report: TrafficReport, q: QueryHealth) -> str:
    """The command one step further for ``q``: ``explain`` on the saved benchmark once it is
    labelled (``judge --llm`` labels it into ``NAME.judged.jsonl``, its default ``--out``;
    ``judge`` without ``--llm`` is refused), else ``query`` to see what it returns. Every
    argument is quoted for a POSIX shell: a logged query is anybody's text, and the line is
    made to be pasted."""
    if report.saved_benchmark:
        saved = Path(report.saved_benchmark)
        judged = saved.with_name(f"{saved.stem}.judged.jsonl")
        label = ["judge", str(saved), "-c", report.collection, "--llm", "openai:gpt-4o-mini"]
        explain = ["explain", str(judged), "-q", q.query_id, "-c", report.collection]
        return f"{shell_command(*label)} && {shell_command(*explain)}"
    return query_command(q.query, report.collection)


def query_command(text: str, collection: str) -> str:
    """``ragsonde query TEXT -c COLLECTION``, quoted for a POSIX shell."""
    return shell_command("query", text, "-c", collection)


def shell_command(*args: str) -> str:
    """``ragsonde ARGS``, each argument quoted for a POSIX shell (``shlex.join``)."""
    return shlex.join(["ragsonde", *args])


def render_html(report: TrafficReport) -> str:
    """The page, autoescaped."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"), autoescape=True
    )
    return env.get_template("traffic.html").render(
        report=report,
        by_id={q.query_id: q for q in report.queries},
        evidence=EVIDENCE,
        explain=lambda q: explain_command(report, q),
    )


def write_html(report: TrafficReport, path: Path) -> Path:
    """Write the page to ``path``."""
    from ragsonde.outputs import write_text

    write_text(path, render_html(report))
    return path
