"""The Typer application every command module registers on."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="ragsonde",
    help="Does my retrieval actually work, and how fast? Retrieve, ingest and evaluate on Qdrant.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)
