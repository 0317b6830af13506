"""``ragsonde schema``: the JSON Schema of what ragsonde writes (``report``, ``comparison``)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ragsonde.cli._common import cli_errors
from ragsonde.cli.app import app

__all__ = ["schema_command"]


@app.command("schema")
@cli_errors
def schema_command(
    name: Annotated[
        str,
        typer.Argument(
            help="report: what `eval --json`/`--save` write; comparison: `compare --json`; "
            "options: what an evaluation takes (eval's flags, a POST /v1/eval body)."
        ),
    ] = "report",
) -> None:
    """Print the JSON Schema of the evaluation report (or of a comparison)."""
    from ragsonde.evaluate.schema import schema_text

    sys.stdout.write(schema_text(name))
