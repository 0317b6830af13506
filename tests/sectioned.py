"""A dozen sectioned Markdown help pages of an invented note-taking app, as a newcomer's own
documents: each page a ``#`` title and three ``##`` sections of a few sentences, every section
shorter than the smallest window of the chunking grid (so splitting at headings decides the
chunks, as on most help sites)."""

from __future__ import annotations

from pathlib import Path

#: topic -> (the thing it is about, what the user does, what goes wrong, the fix)
TOPICS = {
    "sync": (
        "the sync engine",
        "pair a second laptop",
        "a conflicted copy appears",
        "merge the conflicted copy from the history panel",
    ),
    "billing": (
        "the billing portal",
        "switch from the monthly to the yearly plan",
        "a card payment is declined",
        "update the card under Payment methods",
    ),
    "sharing": (
        "shared notebooks",
        "invite a colleague by email address",
        "the invitation link has expired",
        "send a fresh invitation from the Members tab",
    ),
    "export": (
        "the export wizard",
        "export a notebook as PDF or Markdown",
        "embedded images are missing from the archive",
        "tick Include attachments",
    ),
    "offline": (
        "offline mode",
        "keep notebooks available without a network",
        "edits made on a plane do not show up",
        "reconnect and wait for the cloud icon",
    ),
    "search": (
        "full-text search",
        "find a phrase across every notebook",
        "scanned receipts are not found",
        "turn on text recognition for images",
    ),
    "tags": (
        "tags and filters",
        "colour-code notes with nested tags",
        "a renamed tag splits into two",
        "merge the duplicates in the tag manager",
    ),
    "templates": (
        "note templates",
        "start each meeting note from a saved layout",
        "a template loses its checklist",
        "save the template again after editing",
    ),
    "shortcuts": (
        "keyboard shortcuts",
        "open the command palette with Ctrl K",
        "a shortcut clashes with the browser",
        "remap it under Preferences",
    ),
    "backups": (
        "automatic backups",
        "restore yesterday's version of a notebook",
        "the nightly backup stops at ninety percent",
        "free disk space on the device",
    ),
    "accounts": (
        "account security",
        "turn on two-factor sign-in with an authenticator app",
        "the one-time code is rejected",
        "correct the phone's clock",
    ),
    "integrations": (
        "calendar integrations",
        "link notes to calendar events",
        "meetings appear an hour late",
        "set the right time zone in the calendar",
    ),
}


def page(topic: str) -> str:
    thing, task, problem, fix = TOPICS[topic]
    title = topic.capitalize()
    return f"""# {title}

## What {thing} does

Lumen Notes ships {thing} in every plan, including the free one. Most people meet it in the
first week, when they want to {task}. This page explains how {thing} behaves and where its
settings live in the {title} section of Preferences.

## How to {task}

Open Preferences and choose the {title} section from the sidebar. Follow the three steps on
screen to {task}; each step saves as soon as you confirm it. You can undo the change from the
same place at any time within thirty days.

## When {problem}

Sometimes {problem}, usually after an update or a long time offline. The quickest remedy is to
{fix}. If that does not help, contact support with the diagnostic file from Help, Report.
"""


def write_pages(folder: Path) -> Path:
    """Write the twelve pages into ``folder`` (created); returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    for topic in TOPICS:
        (folder / f"{topic}.md").write_text(page(topic), encoding="utf-8")
    return folder
