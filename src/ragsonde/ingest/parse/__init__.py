"""Parsers: raw file or page text → title, metadata and sections, chosen by format name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ragsonde.ingest.document import Section

__all__ = ["PARSERS", "PARSER_FOR_SUFFIX", "Parsed", "parse"]


@dataclass(frozen=True)
class Parsed:
    sections: tuple[Section, ...]
    title: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    """What was read otherwise than the file meant (a broken front matter): said, not fatal."""


def _markdown(text: str) -> Parsed:
    from ragsonde.ingest.parse.markdown import parse_markdown

    return parse_markdown(text)


def _html(text: str) -> Parsed:
    from ragsonde.ingest.parse.html import parse_html

    return parse_html(text)


def _plain(text: str) -> Parsed:
    stripped = text.strip()
    return Parsed(sections=(Section((), stripped, len(text) - len(text.lstrip())),))


#: Format name -> parser.
PARSERS: dict[str, Callable[[str], Parsed]] = {
    "markdown": _markdown,
    "html": _html,
    "text": _plain,
}

#: File suffix -> format name (the folder source reads only these).
PARSER_FOR_SUFFIX: dict[str, str] = {
    ".md": "markdown",
    ".mdx": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".txt": "text",
    ".rst": "text",
}


def parse(fmt: str, text: str) -> Parsed:
    """Parse ``text`` as ``fmt`` (a key of :data:`PARSERS`)."""
    return PARSERS[fmt](text)
