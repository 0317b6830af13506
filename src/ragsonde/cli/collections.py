"""``ragsonde collections``: list the store's collections, delete some, prune ragsonde's copies.

Thin over :mod:`ragsonde.catalog`; everything goes through the store (never by removing folders
behind its back). ``--json`` prints :class:`~ragsonde.catalog.CollectionEntry` objects.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from ragsonde.cli._common import (
    ConfigOpt,
    HomeOpt,
    JsonOpt,
    cli_errors,
    console,
    err_console,
    print_json,
    settings_from_options,
)
from ragsonde.cli.app import app
from ragsonde.models.text import counted

if TYPE_CHECKING:
    from pathlib import Path

    from ragsonde.catalog import CollectionEntry
    from ragsonde.models.store import Store

__all__ = ["collections_app"]

collections_app = typer.Typer(
    name="collections",
    help="The store's collections: list them (sizes, vectors, modes, ragsonde's derived copies), "
    "delete some, prune the copies ragsonde made.",
    no_args_is_help=True,
    rich_markup_mode="rich",
)
app.add_typer(collections_app, name="collections")

YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Delete without asking.")]


def _open(home: Path | None, config_file: Path | None) -> Store:
    from ragsonde.store import open_store

    return open_store(settings_from_options(config=config_file, home=home))


def _derived(e: CollectionEntry) -> str:
    if e.derived is None:
        return ""
    seed = f", seed {e.derived.seed}" if e.derived.seed is not None else ""
    return f"{e.derived.method} copy of {e.derived.of}{seed}"


def _table(entries: list[CollectionEntry]) -> Table:
    table = Table(title=counted(len(entries), "collection"))
    for col in ("name", "points", "dense vector", "sparse vector", "modes", "derived"):
        table.add_column(
            col, justify="right" if col == "points" else "left", no_wrap=col != "modes"
        )
    for e in entries:
        if e.in_use is not None:
            table.add_row(escape(e.name), "?", f"in use by {escape(e.in_use)}", "", "", "")
            continue
        if e.unreadable is not None:
            table.add_row(escape(e.name), "?", "not read (see the warning)", "", "", "")
            continue
        table.add_row(
            escape(e.name),
            str(e.points),
            f"{e.dimension}d {(e.distance or '').lower()}"
            + (f" ({escape(e.dense_vector)})" if e.dense_vector else ""),
            e.sparse_vector or "",
            ", ".join(e.modes),
            escape(_derived(e)),
        )
    return table


def _say_held(entries: list[CollectionEntry], what: str) -> None:
    """On stderr: the collections another process holds, and that ``what`` left them out."""
    for e in entries:
        if e.in_use is not None:
            err_console.print(
                f"[yellow]warning[/]: collection '{escape(e.name)}' is in use by "
                f"{escape(e.in_use)}: {what} (stop that process, or query through it)"
            )
        elif e.unreadable is not None:
            err_console.print(f"[yellow]warning[/]: {escape(e.unreadable)}", soft_wrap=True)


def _confirm(names: list[str], yes: bool, json_output: bool) -> None:
    """Ask before deleting (``--yes`` skips it); without a terminal to ask on, refuse."""
    if yes:
        return
    from ragsonde.errors import QueryValidationError

    if json_output or not sys.stdin.isatty():
        raise QueryValidationError(
            f"Deleting {', '.join(names)} needs confirmation: pass --yes.", field="yes"
        )
    if not typer.confirm(f"Delete {len(names)} collection(s): {', '.join(names)}?"):
        raise typer.Exit(1)


@collections_app.command("list")
@cli_errors
def list_command(
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """List every collection: points, vectors, search modes, and which are ragsonde's derived
    copies (the ICT copy `generate` writes) and of what."""
    from ragsonde.catalog import list_entries

    store = _open(home, config_file)
    try:
        entries = list_entries(store)
    finally:
        store.close()
    _say_held(entries, "its points, vectors and modes could not be read")
    if json_output:
        print_json([e.model_dump(mode="json") for e in entries])
    elif entries:
        console.print(_table(entries))
    else:
        console.print("no collections yet (`ragsonde ingest PATH` makes one)")


@collections_app.command("delete")
@cli_errors
def delete_command(
    names: Annotated[list[str], typer.Argument(help="The collections to delete.")],
    yes: YesOpt = False,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Delete collections, through the store (asks first; --yes does not)."""
    from ragsonde.catalog import delete_collections

    store = _open(home, config_file)
    try:
        have = set(store.list_collections())
        if all(n in have for n in names):  # an unknown name fails below, before any question
            _confirm(names, yes, json_output)
        deleted = delete_collections(store, names)
    finally:
        store.close()
    _report(deleted, json_output)


@collections_app.command("prune")
@cli_errors
def prune_command(
    of: Annotated[
        str | None, typer.Option("--of", help="Only the copies of this collection.")
    ] = None,
    yes: YesOpt = False,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    json_output: JsonOpt = False,
) -> None:
    """Delete the copies ragsonde derived (ICT copies), never a collection it did not make."""
    from ragsonde.catalog import delete_collections, derived_copies, list_entries

    store = _open(home, config_file)
    try:
        entries = list_entries(store)
        _say_held(entries, "not checked for a copy to prune")
        names = [e.name for e in derived_copies(store, of, entries)]
        if names:
            _confirm(names, yes, json_output)
        deleted = delete_collections(store, names)
    finally:
        store.close()
    _report(deleted, json_output)


def _report(deleted: list[str], json_output: bool) -> None:
    if json_output:
        print_json({"deleted": deleted})
    elif deleted:
        console.print(f"deleted {len(deleted)}: {escape(', '.join(deleted))}")
    else:
        console.print("nothing to delete")
