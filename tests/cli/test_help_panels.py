"""``ragsonde --help`` in the order of a newcomer's first hour, grouped in panels, and help text
as paragraphs rather than the source file's line breaks."""

from __future__ import annotations

import re

from ragsonde.cli.panels import PANELS, WORKFLOW, command_name, paragraphs
from tests.support import Cli


def test_every_command_has_a_place_in_the_workflow(cli: Cli) -> None:
    from ragsonde.cli.app import app

    names = {command_name(c) for c in app.registered_commands} | {
        g.name for g in app.registered_groups
    }
    assert names == set(WORKFLOW)
    assert set(WORKFLOW.values()) == set(PANELS)


def test_help_lists_the_panels_and_their_commands_in_workflow_order(cli: Cli) -> None:
    out = cli("--help", env={"COLUMNS": "100"})
    assert out.exit_code == 0
    panels = re.findall(r"╭─ ([A-Z][a-z ]+?) ─", out.stdout)
    assert panels == ["Options", *PANELS]
    listed = re.findall(r"^│ ([a-z]+) {2,}", out.stdout, flags=re.M)
    assert listed == list(WORKFLOW)
    for panel in PANELS:  # each command under its own panel
        block = out.stdout.split(f"╭─ {panel} ")[1].split("╰")[0]
        assert re.findall(r"^│ ([a-z]+) {2,}", block, flags=re.M) == [
            name for name, where in WORKFLOW.items() if where == panel
        ]


def test_docstrings_render_as_paragraphs() -> None:
    doc = """Which chunking? Sweep splitters, sizes and overlaps on your
    documents into temporary collections.

    A second paragraph, written
    over two lines.
    - a list item
    - another
    """
    assert paragraphs(doc) == (
        "Which chunking? Sweep splitters, sizes and overlaps on your documents into temporary "
        "collections.\n\nA second paragraph, written over two lines.\n- a list item\n- another"
    )


def test_a_command_help_keeps_its_paragraphs_and_joins_its_lines(cli: Cli) -> None:
    out = cli("chunking", "--help", env={"COLUMNS": "200"})
    assert out.exit_code == 0
    # one paragraph in the docstring, two source lines: one line on a wide terminal
    assert "on your documents into temporary collections (yours are untouched)" in out.stdout


def _helps(command, path: str):  # type: ignore[no-untyped-def]
    """(where, text) of every help text under a click command: its own and its parameters'."""
    yield path, command.help or ""
    for param in command.params:
        yield f"{path} {param.name}", getattr(param, "help", None) or ""
    for name, sub in getattr(command, "commands", {}).items():  # a group's commands
        yield from _helps(sub, f"{path} {name}")


def test_no_help_text_loses_a_bracket_to_rich_markup(cli: Cli) -> None:
    """Help is Rich markup: an unescaped ``[default: built-in]`` or ``'ragsonde[llm-local]'``
    is read as a style tag and vanishes (``tune --grid`` said "Grid file (TOML or YAML) .",
    ``--llm`` "pip install 'ragsonde'"). Every help text renders whole."""
    import typer
    from rich.text import Text

    from ragsonde.cli.app import app

    lost, helps = [], list(_helps(typer.main.get_command(app), "ragsonde"))
    assert len(helps) > 300, len(helps)  # every command's options, the groups' included
    for where, text in helps:
        shown = Text.from_markup(text).plain
        if shown != text.replace("\\[", "["):
            lost.append(f"{where}: {text!r} shows as {shown!r}")
    assert not lost, "\n".join(lost)
