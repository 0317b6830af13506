"""``ragsonde eval BENCH --mcp SERVER --tool NAME``: an MCP search tool evaluated like a
collection, alone or ``--versus`` a ragsonde collection.

Not a command of its own: ``eval`` hands over here when ``--mcp`` is given, so the tool takes the
evaluation's options (cutoffs, relevance, gates, --save, --json) unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ragsonde.cli._common import console, err_console, print_json
from ragsonde.errors import QueryValidationError

if TYPE_CHECKING:
    from ragsonde.config import Settings
    from ragsonde.evaluate import EvalOptions

__all__ = [
    "McpArgOpt",
    "McpHeaderOpt",
    "McpMapOpt",
    "McpOpt",
    "ToolOpt",
    "refuse_unused",
    "run_mcp_eval",
]

_PANEL = "An MCP search tool (--mcp)"

McpOpt = Annotated[
    str | None,
    typer.Option(
        "--mcp",
        help="Evaluate an MCP server's search tool instead of a collection: the command that "
        "starts it on stdio ('python my_server.py'), or its streamable HTTP URL. With "
        "--versus COLLECTION, compare it with a ragsonde collection.",
        rich_help_panel=_PANEL,
    ),
]
ToolOpt = Annotated[
    str | None,
    typer.Option("--tool", help="The tool to call per query.", rich_help_panel=_PANEL),
]
McpArgOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--arg",
        help="A tool argument, NAME=VALUE (repeatable): {query}, {top_k}, {filters}, or a JSON "
        "value \\[default: query={query}, and {top_k} for a count argument the tool declares].",
        rich_help_panel=_PANEL,
    ),
]
McpMapOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--map",
        help="Where the answer keeps its items and their fields, KEY=PATH (repeatable; keys "
        "items, id, score, text, url) \\[default: read off the tool's output schema].",
        rich_help_panel=_PANEL,
    ),
]
McpHeaderOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--mcp-header",
        help="An HTTP header for a URL server, NAME=VALUE (e.g. 'Authorization=Bearer KEY').",
        rich_help_panel=_PANEL,
    ),
]


def _pairs(values: Sequence[str] | None, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values or ():
        name, sep, rest = value.partition("=")
        if not sep or not name.strip():
            raise QueryValidationError(
                f"{flag}: {value!r} is not NAME=VALUE (e.g. {flag} query={{query}}).",
                field=flag.lstrip("-"),
            )
        out[name.strip()] = rest
    return out


def refuse_unused(given: Mapping[str, object]) -> None:
    """A VALIDATION_ERROR naming eval's options that an MCP tool's evaluation does not apply
    (``given``: option -> its value, ``None``/``False``/empty = not given). They were
    ignored without a word: ``--report r.html`` wrote nothing, ``--baseline`` compared
    nothing, and the run is not recorded in the history."""
    unused = [flag for flag, value in given.items() if value not in (None, False, [], ())]
    if unused:
        raise QueryValidationError(
            f"{', '.join(unused)}: not with --mcp. A tool's evaluation writes --save and --json "
            "only, compares only with --versus COLLECTION, and is not recorded in the history; "
            "run these on a collection (-c).",
            field="mcp",
        )


def run_mcp_eval(
    dataset: str,
    *,
    server: str,
    tool: str | None,
    args: Sequence[str] | None,
    item_map: Sequence[str] | None,
    headers: Sequence[str] | None,
    versus: str | None,
    settings: Settings,
    options: EvalOptions,
    save: Path | None,
    json_output: bool,
    settings_file: Path | None = None,
) -> None:
    """Evaluate the tool (and ``versus`` collection A), print, save; exit 1 on a failed gate."""
    from ragsonde.cli.progress import RichProgress
    from ragsonde.cli.render import render_comparison, render_report, render_side
    from ragsonde.evaluate.report import EvalReport, VersusReport
    from ragsonde.ingest.sources import input_files
    from ragsonde.mcp.target import ToolTarget, evaluate_tool
    from ragsonde.outputs import check_outputs, write_text

    if not tool:
        raise QueryValidationError(
            "--mcp needs --tool NAME: the search tool to call.", field="tool"
        )
    check_outputs(
        {"--save": save}, inputs=[*input_files(dataset), options.plan_file, settings_file]
    )  # before the tool is called
    target = ToolTarget(
        server=server,
        tool=tool,
        args=_pairs(args, "--arg"),
        map=_pairs(item_map, "--map"),
        headers=_pairs(headers, "--mcp-header"),
    )
    with RichProgress(not json_output and err_console.is_terminal, "queries") as bar:
        report = evaluate_tool(dataset, target, options=options, settings=settings, progress=bar)
    result: EvalReport | VersusReport = report
    if versus is not None:
        from ragsonde.evaluate import evaluate
        from ragsonde.evaluate.compare import compare_reports
        from ragsonde.workspace import Workspace

        with Workspace(settings) as ws:  # whoever opens it closes it
            a = evaluate(dataset, collection=versus, options=options, workspace=ws, record=False)
        result = VersusReport(a=a, b=report, comparison=compare_reports(a, report))
        from ragsonde.estimate import estimate_comparison

        estimate_comparison(result.comparison, a, report)  # each difference's interval
    if save is not None:
        write_text(save, result.model_dump_json(indent=2))
    if json_output:
        print_json(result)
    elif isinstance(result, VersusReport):
        render_side(f"A (collection {versus})", result.a)
        render_side(f"B (MCP tool {tool})", result.b)
        console.rule("[bold]B vs A[/]")
        render_comparison(result.comparison)
    else:
        render_report(report)  # its warnings say how items were named
    failed = [g.gate for g in report.gates if not g.passed]
    if failed:
        err_console.print(f"[bold red]gates failed[/]: {', '.join(failed)}")
        raise typer.Exit(1)
