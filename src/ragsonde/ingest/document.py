"""What sources produce and the pipeline consumes: documents made of titled sections."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Document", "Failure", "Section"]


@dataclass(frozen=True)
class Section:
    """A run of text under one heading path (``("Sensors", "Lidar")``); empty path: no heading."""

    path: tuple[str, ...]
    text: str
    offset: int | None = None
    """Where ``text`` starts in the parsed document's text (a Python ``str`` index), so that
    ``document_text[offset : offset + len(text)] == text``; ``None`` when the section is not a
    verbatim slice of it (HTML, whose text is rebuilt from the markup). Chunks carry their span
    from it (``start``/``end`` in their payload), which span-labelled benchmarks are scored by."""

    @property
    def name(self) -> str | None:
        """The heading path as stored in the payload: ``Sensors > Lidar`` (``None`` without one)."""
        return " > ".join(self.path) if self.path else None


@dataclass(frozen=True)
class Document:
    """One source document, split along its headings.

    ``doc_id`` is stable across runs (a relative path, a BEIR ``_id``, a URL): chunk ids derive
    from it, which is what makes re-ingesting an upsert.
    """

    doc_id: str
    sections: tuple[Section, ...]
    title: str | None = None
    url: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    embed_title: bool = True
    """Prefix each chunk's embedded text with ``title: section`` (off when the title is already
    part of the text, as in BEIR corpora)."""
    warnings: tuple[str, ...] = ()
    """What its parser read otherwise than the file meant; the ingest report lists them."""
    source: str | None = None
    """Where it was read from, when that is not its ``url`` (a file of a folder): what a
    failure about it names."""

    @property
    def is_empty(self) -> bool:
        return not any(s.text.strip() for s in self.sections)


@dataclass(frozen=True)
class Failure:
    """A document that could not be read; reported, never fatal for the run."""

    source: str
    reason: str
    doc_id: str | None = None
    """The id of the document, when it was read and found empty: its stored chunks are deleted
    (it shrank to nothing), and it does not stop ``--prune`` (which document it is, is known)."""

    def to_json(self) -> dict[str, str]:
        return {"source": self.source, "reason": self.reason}
