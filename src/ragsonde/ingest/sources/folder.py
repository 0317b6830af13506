"""A folder (recursive) or a single file of Markdown, HTML, text or reStructuredText."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from ragsonde.ingest.document import Document, Failure
from ragsonde.ingest.parse import PARSER_FOR_SUFFIX, parse
from ragsonde.inputs import MAX_DOCUMENT_BYTES, decoded_text, not_a_file, read_bytes
from ragsonde.models.text import invalid_text_in, invalid_unicode_at, printable

__all__ = ["FolderSource"]


class FolderSource:
    """Every readable file under ``root``; ``doc_id`` is its path relative to ``root``, no suffix.

    ``url`` comes from front matter, else ``base_url`` + the relative path, else the relative path.
    A file that is not UTF-8 text is skipped and listed (a :class:`Failure` naming the line of
    the first bad byte), and so is a symlink that leads out of ``root``: ingesting a folder never
    reads what lies outside it.
    """

    def __init__(self, root: Path, *, base_url: str | None = None) -> None:
        self.root = root
        self.base_url = base_url
        self._unread: list[Path] = []

    def _files(self) -> list[Path]:
        if self.root.is_file():
            return [self.root]
        found = [
            p
            for p in self.root.rglob("*")
            if (p.is_symlink() or not p.is_dir())  # a FIFO or a device too: listed, skipped
            and not any(part.startswith(".") for part in p.relative_to(self.root).parts)
        ]
        self._unread = sorted(p for p in found if p.suffix.lower() not in PARSER_FOR_SUFFIX)
        return sorted(p for p in found if p.suffix.lower() in PARSER_FOR_SUFFIX)

    def notes(self) -> list[str]:
        """The files of kinds ingest does not read, by suffix: a folder of PDFs and Markdown
        ingested its Markdown and said nothing of the PDFs."""
        if not self._unread:
            return []
        by_suffix: dict[str, list[str]] = {}
        for p in self._unread:
            by_suffix.setdefault(p.suffix.lower() or "(no suffix)", []).append(p.name)
        kinds = ", ".join(
            f"{len(names)} {suffix} ({', '.join(printable(n) for n in names[:3])}"
            f"{', …' if len(names) > 3 else ''})"
            for suffix, names in sorted(by_suffix.items())
        )
        hint = (
            " Convert PDF or Word files to Markdown or text first."
            if any(s in by_suffix for s in (".pdf", ".docx", ".doc"))
            else ""
        )
        return [
            f"{len(self._unread)} files were not read, of kinds ingest does not read: {kinds}; "
            f"it reads {', '.join(PARSER_FOR_SUFFIX)}.{hint}"
        ]

    def _outside(self, path: Path) -> bool:
        """Whether ``path`` (a symlink, or under one) resolves to a place outside the root."""
        if self.root.is_file():
            return False
        # realpath, not resolve(): Python 3.11's resolve() raises RuntimeError on a symlink loop
        # (ingest ended in a traceback); a loop stays inside and not_a_file names it
        return not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(self.root))

    def estimate(self) -> int | None:
        return len(self._files())

    def __iter__(self) -> Iterator[Document | Failure]:
        base = self.root.parent if self.root.is_file() else self.root
        for path in self._files():
            rel = path.relative_to(base).as_posix()
            yield self._read(path, rel)

    def _read(self, path: Path, rel: str) -> Document | Failure:
        if invalid_unicode_at(rel) is not None:  # undecodable bytes, kept as surrogate escapes
            return Failure(
                printable(rel),
                "skipped: its name is not UTF-8 (it would be the document's id, title and url): "
                "rename it",
            )
        if self._outside(path):
            return Failure(rel, "skipped: a symlink to outside the ingested folder")
        why = not_a_file(path)  # a symlink to a FIFO was "a broken symlink"; a FIFO unlisted
        if why is not None:
            return Failure(rel, f"skipped: {why}")
        try:
            data = read_bytes(path, MAX_DOCUMENT_BYTES, "document")
        except ValueError as e:
            return Failure(rel, f"unreadable: {e}")
        try:
            raw = decoded_text(data)  # UTF-16, NUL bytes (binary), bytes not UTF-8: why, where
        except ValueError as e:
            return Failure(rel, f"skipped: {e}")
        fmt = PARSER_FOR_SUFFIX.get(path.suffix.lower(), "text")
        parsed = parse(fmt, raw)
        bad = invalid_text_in(parsed.metadata)  # YAML's "\ud800" is a lone surrogate
        if bad is not None:
            where = ".".join(str(p) for p in bad[0]) or "a key"
            return Failure(
                rel, f"skipped: its front matter's {printable(where)} is not valid Unicode text"
            )
        meta = dict(parsed.metadata)
        url = meta.pop("url", None)
        if not url:
            url = self.base_url.rstrip("/") + "/" + rel if self.base_url else rel
        meta.pop("title", None)
        doc = Document(
            doc_id=rel.rsplit(".", 1)[0] if "." in Path(rel).name else rel,
            sections=parsed.sections,
            title=parsed.title or path.stem,
            url=str(url),
            metadata=meta,
            warnings=parsed.warnings,
            source=rel,
        )
        return Failure(rel, "empty document", doc.doc_id) if doc.is_empty else doc
