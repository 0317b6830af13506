"""A BEIR corpus: ``corpus.jsonl`` of ``{"_id", "title", "text", "metadata"?}``; text is
title + " " + text. ``metadata`` goes to the payload, its ``url`` (NFCorpus and TREC-COVID give
each document's) as the document's url."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from ragsonde.ingest.document import Document, Failure, Section
from ragsonde.ingest.sources.jsonl import wrong_types
from ragsonde.inputs import read_lines
from ragsonde.models.text import loads_json

__all__ = ["BeirCorpus", "corpus_path"]


def corpus_path(location: Path) -> Path:
    return location / "corpus.jsonl" if location.is_dir() else location


class BeirCorpus:
    def __init__(self, location: Path) -> None:
        self.path = corpus_path(location)

    def notes(self) -> list[str]:
        return []

    def estimate(self) -> int | None:
        try:  # bounded lines: a file of one 200 MB line is not held whole to count it
            return sum(1 for _, line in read_lines(self.path) if line.strip())
        except ValueError:
            return None

    def __iter__(self) -> Iterator[Document | Failure]:
        try:
            for n, raw in read_lines(self.path):
                if raw.strip():
                    yield self._doc(raw, n)
        except ValueError as e:  # a line over the limit, a FIFO: the rest is not read
            yield Failure(self.path.name, f"{e}; the rest of the file was not read")

    def _doc(self, raw: bytes, line: int) -> Document | Failure:
        where = f"{self.path.name}:{line}"
        try:
            row = loads_json(raw)
        except ValueError as e:  # not JSON, not UTF-8, a lone surrogate (its field named)
            return Failure(where, f"not a BEIR corpus line ({e})")
        if not isinstance(row, dict) or "_id" not in row:
            return Failure(where, 'not a BEIR corpus line: each line is an object with "_id"')
        # str() made a null id "None", a list of words the text embedded
        wrong = wrong_types(row, "_id", ("title", "text"))
        if wrong is not None:
            return Failure(where, wrong)
        doc_id = str(row["_id"])
        title = (row.get("title") or "").strip()
        body = (row.get("text") or "").strip()
        text = f"{title} {body}".strip()
        if not text:
            return Failure(f"{where} ({doc_id})", "empty document", doc_id)
        meta = row.get("metadata") or {}
        if not isinstance(meta, dict):  # it was dropped without a word
            return Failure(where, f'"metadata" must be an object, not {type(meta).__name__}')
        meta = dict(meta)
        url = meta.pop("url", None)  # the document's own: it was dropped without a word
        if url is not None and not isinstance(url, str):
            return Failure(where, f'"metadata.url" must be a string, not {type(url).__name__}')
        return Document(
            doc_id=doc_id,
            sections=(Section((), text, 0),),
            title=title or None,
            url=url or None,
            metadata=meta,
            embed_title=False,
            source=where,
        )
