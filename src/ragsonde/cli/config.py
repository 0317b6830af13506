"""``ragsonde config``: every effective setting and where it came from, as
``git config --show-origin`` shows it (default, the file with its path, the environment with the
variable, a flag). Secrets are masked."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from ragsonde.cli._common import (
    ConfigOpt,
    JsonOpt,
    cli_errors,
    config_file_in_use,
    console,
    print_json,
    settings_from_options,
)
from ragsonde.cli.app import app
from ragsonde.config_sources import origins, shown


@app.command("config")
@cli_errors
def config_command(config_file: ConfigOpt = None, json_output: JsonOpt = False) -> None:
    """Print each effective setting and where it came from: default, file, env or flag.

    Precedence: a flag > the environment > the config file > the default."""
    settings = settings_from_options(config=config_file)
    path = config_file_in_use(config_file)
    rows = [
        {
            "key": o.key,
            "value": shown(getattr(settings, o.key) if "." not in o.key else o.value),
            "source": o.source,
            "where": o.where,
        }
        for o in origins(settings, {}, path)
    ]
    if json_output:
        print_json({"config_file": str(path), "settings": rows})
        return
    table = Table(title=f"effective settings (config file: {escape(str(path))})")
    for col in ("setting", "value", "source"):
        table.add_column(col)
    for row in rows:
        where = f" {row['where']}" if row["where"] else ""
        table.add_row(row["key"], escape(repr(row["value"])), escape(row["source"] + where))
    console.print(table)
