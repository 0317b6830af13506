"""HTML: the page's main content only (no navigation, footer, scripts), split along headings."""

from __future__ import annotations

import re
from typing import Any

from ragsonde.ingest.document import Section
from ragsonde.ingest.parse import Parsed

__all__ = ["parse_html"]

_DROP = "script, style, noscript, template, nav, header, footer, aside, form, svg, iframe, button"
_MAIN = ("main", "article", "[role=main]", "#content", ".content", "body")
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_BLOCKS = {
    "p", "li", "pre", "td", "th", "dt", "dd", "blockquote", "figcaption", "caption", "summary",
}  # fmt: skip
_SPACE = re.compile(r"[ \t\r\f\v]+")


def _text(node: Any) -> str:
    raw: str = node.text(separator=" " if node.tag != "pre" else "", strip=False)
    if node.tag == "pre":
        return raw.strip("\n")
    return _SPACE.sub(" ", raw.replace("\n", " ")).strip()


def _inside_block(node: Any, root: Any) -> bool:
    parent = node.parent
    while parent is not None and parent is not root and parent.mem_id != root.mem_id:
        if parent.tag in _BLOCKS:
            return True
        parent = parent.parent
    return False


def parse_html(html: str) -> Parsed:
    """Title from ``<title>`` (else the first ``<h1>``); sections from headings in the main part."""
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    title_node = tree.css_first("title")
    title = _text(title_node) if title_node is not None else None
    for node in tree.css(_DROP):
        node.decompose()
    root = next((n for sel in _MAIN if (n := tree.css_first(sel)) is not None), tree.root)
    if root is None:
        return Parsed(sections=(), title=title)

    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    buf: list[str] = []
    first_h1: str | None = None

    def flush() -> None:
        text = "\n\n".join(b for b in buf if b)
        if text.strip():
            sections.append(Section(tuple(t for _, t in stack), text.strip()))
        buf.clear()

    for node in root.traverse(include_text=False):
        tag = node.tag
        if tag in _HEADINGS:
            flush()
            heading = _text(node)
            if not heading:
                continue
            level = _HEADINGS[tag]
            if level == 1 and first_h1 is None:
                first_h1 = heading
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, heading))
        elif tag in _BLOCKS and not _inside_block(node, root):
            buf.append(_text(node))
    flush()
    if not title:
        title = first_h1
    return Parsed(sections=tuple(sections), title=title or None)
