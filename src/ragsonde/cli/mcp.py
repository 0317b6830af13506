"""``ragsonde mcp``: ragsonde's tools for a coding agent, as an MCP server over stdio."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ragsonde.cli._common import (
    CollectionOpt,
    ConfigOpt,
    EmbedderOpt,
    HomeOpt,
    VectorOpt,
    cli_errors,
    err_console,
    settings_from_options,
)
from ragsonde.cli.app import app

__all__ = ["mcp_command"]

RootOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--root",
        help="A folder the tools may read paths under (repeatable) \\[default: the roots the "
        "client declares, else the current folder].",
    ),
]
AllowWriteOpt = Annotated[
    bool,
    typer.Option(
        "--allow-write",
        help="Add the ingest tool and record evaluations in the run history (off: every tool "
        "only reads).",
    ),
]


@app.command("mcp")
@cli_errors
def mcp_command(
    root: RootOpt = None,
    allow_write: AllowWriteOpt = False,
    collection: CollectionOpt = None,
    vector: VectorOpt = None,
    embedder: EmbedderOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
) -> None:
    """Serve ragsonde's tools to an MCP client (Claude Code, Cursor, VS Code) over stdio:
    search, evaluate, explain_miss, failing_queries, history_list, history_diff,
    inspect_collection, config (and ingest with --allow-write)."""
    try:
        from ragsonde.mcp import serve_stdio
    except ImportError as e:
        err_console.print(
            f"The MCP server needs its extra ({e.name} is missing): pip install 'ragsonde[mcp]'",
            markup=False,
        )
        raise typer.Exit(1) from e
    settings = settings_from_options(
        config=config_file, collection=collection, home=home, embedder=embedder, vector=vector
    )
    serve_stdio(settings, roots=root or None, allow_write=allow_write, config_file=config_file)
