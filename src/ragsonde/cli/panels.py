"""How ``ragsonde --help`` reads: commands in the order of a newcomer's first hour, grouped in
panels (set up, evaluate, diagnose, labels, serve), and docstrings as paragraphs.

One table (:data:`WORKFLOW`) says where each command goes; :func:`arrange` applies it to the
registered commands after the command modules are imported, so no module has to know its panel
and a command missing from the table fails a test instead of landing at the end.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import typer
from typer.core import TyperGroup

__all__ = ["PANELS", "WORKFLOW", "WorkflowGroup", "arrange", "command_name", "paragraphs"]

#: The panels, in the order ``--help`` shows them.
PANELS = ("Set up", "Evaluate", "Diagnose", "Labels", "Serve")

#: Command (or command group) -> its panel, in the order it is listed within the panel.
WORKFLOW: dict[str, str] = {
    "ingest": "Set up",
    "query": "Set up",
    "batch": "Set up",
    "inspect": "Set up",
    "collections": "Set up",
    "push": "Set up",
    "config": "Set up",
    "eval": "Evaluate",
    "compare": "Evaluate",
    "history": "Evaluate",
    "traffic": "Evaluate",
    "schema": "Evaluate",
    "explain": "Diagnose",
    "chunking": "Diagnose",
    "tune": "Diagnose",
    "generate": "Labels",
    "judge": "Labels",
    "serve": "Serve",
    "mcp": "Serve",
}


def _position(name: str) -> tuple[int, int]:
    panel = WORKFLOW.get(name)
    if panel is None:
        return (len(PANELS), 0)
    return (PANELS.index(panel), list(WORKFLOW).index(name))


class WorkflowGroup(TyperGroup):
    """The root command group: lists its commands (groups among them) in workflow order."""

    def list_commands(self, ctx: Any) -> list[str]:  # Typer's own (vendored) click Context
        return sorted(super().list_commands(ctx), key=_position)


_ITEM = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s")


def paragraphs(doc: str) -> str:
    """A docstring as Rich shows it well: the lines of a paragraph joined into one, paragraphs
    (blank lines) and list items kept, so the terminal wraps the text, not the source file."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", inspect.cleandoc(doc)):
        lines: list[str] = []
        for line in block.splitlines():
            if lines and not _ITEM.match(line) and not line.startswith("  "):
                lines[-1] = f"{lines[-1]} {line.strip()}"
            else:
                lines.append(line.rstrip())
        out.append("\n".join(lines))
    return "\n\n".join(out)


def _reflow(app: typer.Typer) -> None:
    for info in app.registered_commands:
        doc = info.help or (info.callback.__doc__ if info.callback else None)
        if doc:
            info.help = paragraphs(doc)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            _reflow(group.typer_instance)


def command_name(info: typer.models.CommandInfo) -> str:
    if info.name:
        return info.name
    return info.callback.__name__.replace("_", "-") if info.callback else ""


def arrange(app: typer.Typer) -> None:
    """Put ``app``'s registered commands in their :data:`WORKFLOW` panels; reflow their help
    (the order is :class:`WorkflowGroup`'s)."""
    for info in app.registered_commands:
        info.rich_help_panel = WORKFLOW.get(command_name(info), info.rich_help_panel)
    for group in app.registered_groups:
        group.rich_help_panel = WORKFLOW.get(group.name or "", group.rich_help_panel)
    _reflow(app)
