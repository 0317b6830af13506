"""What a sweep reads: the documents (with why any were left out), and the embedder's word
pieces to size chunks and budgets in."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ragsonde.errors import QueryValidationError
from ragsonde.ingest.document import Document
from ragsonde.ingest.sources import open_source

__all__ = ["Tokens", "read_documents"]


class Tokens:
    """The embedder's word pieces: its ``tokenizer.json``, without truncation."""

    def __init__(self, path: Path) -> None:
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(path))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()

    def count(self, texts: Sequence[str]) -> list[int]:
        encoded = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encoded]


def read_documents(location: str | Path, warnings: list[str]) -> list[Document]:
    docs: list[Document] = []
    unplaced = 0
    for item in open_source(location):
        if isinstance(item, Document):
            docs.append(item)
            unplaced += sum(1 for s in item.sections if s.offset is None)
        else:
            warnings.append(f"{item.source}: {item.reason}")
    if not docs:
        why = f": {'; '.join(warnings)}" if warnings else ""
        raise QueryValidationError(f"No documents to chunk in {location}{why}.", field="docs")
    if unplaced:
        warnings.append(
            f"{unplaced} sections are not verbatim slices of their document (HTML, or CRLF "
            "line ends): they are left out of the sweep, having no spans to score."
        )
    return docs
