"""Markdown: YAML front matter, then sections along ATX/setext headings (markdown-it-py)."""

from __future__ import annotations

import re
from typing import Any

from ragsonde.ingest.document import Section
from ragsonde.ingest.parse import Parsed

__all__ = ["parse_markdown", "split_front_matter"]

_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def split_front_matter(text: str) -> tuple[dict[str, Any], str, str | None]:
    """``(metadata, body, problem)``; a front matter block that is not a YAML mapping is left
    as text. ``problem`` says why when the block is YAML that cannot be read (a broken front
    matter, whose metadata would be lost without a word); a block that reads as a plain value is
    Markdown (a rule, then a setext heading), not a problem."""
    m = _FRONT_MATTER.match(text)
    if not m:
        return {}, text, None
    import yaml

    try:
        meta = yaml.safe_load(m.group(1))
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""  # + the opening ---
        why = getattr(e, "problem", None) or type(e).__name__
        return (
            {},
            text,
            f"its front matter is not valid YAML ({why}{where}): kept as text, and its "
            "metadata (title, url, ...) was not read",
        )
    if not isinstance(meta, dict):
        return {}, text, None
    return {str(k): v for k, v in meta.items()}, text[m.end() :], None


def parse_markdown(text: str) -> Parsed:
    """Split on headings (code fences are respected); a section's path is every heading above it.

    The title is front matter's ``title``, else the first ``#`` heading.
    """
    from markdown_it import MarkdownIt

    meta, body, problem = split_front_matter(text)
    lines = body.splitlines()
    # where each line starts in ``text``: a section's offset (its chunks' spans) is read there
    starts = [len(text) - len(body)]
    for line in body.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    tokens = MarkdownIt("commonmark").parse(body)
    headings: list[tuple[int, int, int, str]] = []  # (start line, end line, level, text)
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map is not None:
            inline = tokens[i + 1]
            headings.append((tok.map[0], tok.map[1], int(tok.tag[1]), inline.content.strip()))

    title = meta.get("title")
    top_level = min((h[2] for h in headings), default=0)
    stack: list[tuple[int, str]] = []
    sections: list[Section] = []

    def emit(start: int, end: int) -> None:
        joined = "\n".join(lines[start:end])
        chunk = joined.strip()
        if chunk:
            at = starts[start] + len(joined) - len(joined.lstrip())
            # lines joined by "\n" are a verbatim slice unless the file ends lines otherwise
            offset = at if text[at : at + len(chunk)] == chunk else None
            sections.append(Section(tuple(t for _, t in stack), chunk, offset))

    cursor = 0
    for start, end, level, heading in headings:
        emit(cursor, start)
        if title is None and level == top_level and level == 1:
            title = heading
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading))
        cursor = end
    emit(cursor, len(lines))
    return Parsed(
        sections=tuple(sections),
        title=str(title) if title is not None else None,
        metadata=meta,
        warnings=(problem,) if problem else (),
    )
