"""``ragsonde schema``: the JSON Schema of what ragsonde writes (``report``, ``comparison``,
``traffic``, ``history-*``)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ragsonde.cli._common import cli_errors
from ragsonde.cli.app import app

__all__ = ["schema_command"]

#: Schemas of the rooms above evaluation (they import it, so evaluation cannot list them):
#: name -> the module whose ``schema_text()`` prints it.
OTHER_SCHEMAS = {"traffic": "ragsonde.traffic.report"}


@app.command("schema")
@cli_errors
def schema_command(
    name: Annotated[
        str,
        typer.Argument(
            help="report: what `eval --json`/`--save` write; comparison: `compare --json`; "
            "options: what an evaluation takes (eval's flags, a POST /v1/eval body); "
            "traffic: `traffic --json`."
        ),
    ] = "report",
) -> None:
    """Print the JSON Schema of the evaluation report (or of a comparison)."""
    if name in OTHER_SCHEMAS:
        import importlib

        sys.stdout.write(importlib.import_module(OTHER_SCHEMAS[name]).schema_text())
        return
    from ragsonde.evaluate.schema import schema_text

    sys.stdout.write(schema_text(name))
