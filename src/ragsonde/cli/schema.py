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
            "traffic: `traffic --json`; history-list, history-show, history-diff, "
            "history-trend, history-prune, history-export: `history … --json`."
        ),
    ] = "report",
) -> None:
    """Print the JSON Schema of what a command writes: the evaluation report (default), a
    comparison, eval's options, a traffic report, or a history subcommand's JSON."""
    if name in OTHER_SCHEMAS:
        import importlib

        sys.stdout.write(importlib.import_module(OTHER_SCHEMAS[name]).schema_text())
        return
    from ragsonde.errors import QueryValidationError
    from ragsonde.evaluate.schema import SCHEMAS, schema_text

    if name not in SCHEMAS:  # evaluation's own list does not know the rooms above it
        names = ", ".join([*SCHEMAS, *OTHER_SCHEMAS])
        raise QueryValidationError(f"no schema {name!r}; there are: {names}.", field="name")
    sys.stdout.write(schema_text(name))
