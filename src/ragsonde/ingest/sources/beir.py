"""A BEIR corpus: ``corpus.jsonl`` of ``{"_id", "title", "text"}``; text is title + " " + text."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ragsonde.ingest.document import Document, Failure, Section
from ragsonde.models.text import loads_json

__all__ = ["BeirCorpus", "corpus_path"]


def corpus_path(location: Path) -> Path:
    return location / "corpus.jsonl" if location.is_dir() else location


class BeirCorpus:
    def __init__(self, location: Path) -> None:
        self.path = corpus_path(location)

    def estimate(self) -> int | None:
        with self.path.open("rb") as f:
            return sum(1 for line in f if line.strip())

    def __iter__(self) -> Iterator[Document | Failure]:
        with self.path.open("rb") as f:
            for n, raw in enumerate(f, start=1):
                if not raw.strip():
                    continue
                yield self._doc(raw, n)

    def _doc(self, raw: bytes, line: int) -> Document | Failure:
        where = f"{self.path.name}:{line}"
        try:
            row = loads_json(raw)
            doc_id = str(row["_id"])
        except (ValueError, KeyError, TypeError) as e:  # a lone surrogate: its field named
            return Failure(where, f"not a BEIR corpus line ({e})")
        title = str(row.get("title") or "").strip()
        body = str(row.get("text") or "").strip()
        text = f"{title} {body}".strip()
        if not text:
            return Failure(f"{where} ({doc_id})", "empty document")
        meta = row.get("metadata") if isinstance(row.get("metadata"), dict) else {}
        return Document(
            doc_id=doc_id,
            sections=(Section((), text, 0),),
            title=title or None,
            url=None,
            metadata=dict(meta or {}),
            embed_title=False,
        )
