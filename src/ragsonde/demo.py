"""``make demo`` / ``python -m ragsonde.demo``: the whole loop on the embedded store, offline.

Ingests the sample docs site (24 pages about a mobile robot) into Qdrant Edge under
``RAGSONDE_HOME``, asks it a few questions and shows what comes back, then evaluates retrieval on
the sample benchmark. Running it again re-uses what is stored (nothing is embedded twice).
"""

from __future__ import annotations

import sys

from ragsonde.cli._common import console
from ragsonde.cli.progress import RichProgress
from ragsonde.cli.render import render_response
from ragsonde.config import load_settings
from ragsonde.ingest import ingest
from ragsonde.retriever import Retriever
from ragsonde.samples import demo_queries, robotics_benchmark, robotics_docs
from ragsonde.workspace import Workspace, using

COLLECTION = "ragsonde_demo"


def _evaluate(ws: Workspace) -> bool:
    """The sample benchmark through the evaluation harness; ``True`` when its gate passes."""
    try:
        from ragsonde.cli.render import render_report
        from ragsonde.evaluate import EvalOptions, evaluate
    except ImportError:  # the harness is an optional part of the install
        return True

    options = EvalOptions(gates=["hit_rate@5>=0.8"])
    report = evaluate(str(robotics_benchmark()), options, ws, collection=COLLECTION)
    render_report(report)
    from ragsonde.evaluate.html import write_html_report

    html = ws.settings.home / "demo-report.html"
    write_html_report(report, html)
    console.print(f"HTML report: {html.resolve()}")
    return report.passed


def main() -> int:
    with using(settings=load_settings(collection=COLLECTION)) as ws:
        return _demo(ws)


def _demo(ws: Workspace) -> int:
    settings = ws.settings
    console.rule("[bold]1. Ingest[/] the sample docs into the embedded Qdrant Edge store")
    console.print(f"store: {settings.home.resolve()}   embedder: {settings.embedder}")
    with RichProgress(
        console.is_terminal, "documents", tallies=("chunks",), rate="chunks"
    ) as progress:
        report = ingest(str(robotics_docs()), workspace=ws, progress=progress)
    console.print(
        f"{report.documents} documents → {report.chunks} chunks: {report.embedded} embedded, "
        f"{report.rewritten} payload updated, {report.skipped} already stored "
        f"({report.seconds:.1f} s)"
    )

    console.rule("[bold]2. Retrieve[/]: questions → ranked chunks, with per-stage timings")
    right = 0
    queries = demo_queries()
    with Retriever(workspace=ws) as retriever:
        for q in queries:
            resp = retriever.retrieve({"query": q["query"], "top_k": 3})
            render_response(resp)
            top = resp.results[0].metadata.get("doc_id") if resp.results else None
            ok = top == q["expect"]
            right += ok
            mark = "[green]✓[/]" if ok else "[red]✗[/]"
            console.print(f"{mark} expected page '{q['expect']}', top result is from '{top}'\n")
    console.print(f"[bold]{right}/{len(queries)}[/] questions answered by the expected page first.")

    console.rule("[bold]3. Evaluate[/] the sample benchmark")
    passed = _evaluate(ws)
    return 0 if right == len(queries) and passed else 1


if __name__ == "__main__":
    sys.exit(main())
