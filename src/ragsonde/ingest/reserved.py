"""The payload fields ingest writes itself, and the documents whose own fields take their names.

A document's fields other than its text, title and url (a ``.jsonl`` row's, front matter's, a
BEIR row's ``metadata``) go to each of its chunks' payloads, beside ingest's own. A field of one
of ingest's names was lost without a word: ``created_at`` replaced by the time of the write,
``section`` or ``doc_id`` left out. Such a document is refused (a failure of its own, the others
ingested), naming the fields and what ingest keeps there, so that it is renamed in the source.
"""

from __future__ import annotations

from ragsonde.ingest.document import Document, Failure

__all__ = ["RESERVED_FIELDS", "reserved_fields"]

#: Every payload field ingest writes (``ragsonde.ingest.pipeline``), with what it holds.
RESERVED_FIELDS: dict[str, str] = {
    "text": "the chunk's text",
    "url": "the document's url",
    "title": "the document's title",
    "section": "the chunk's heading path",
    "chunk_index": "the chunk's position in its document",
    "start": "where the chunk starts in its document",
    "end": "where the chunk ends in its document",
    "doc_id": "the document's id",
    "content_hash": "the sha256 of the chunk's text",
    "embedder": "the embedder that made its vector",
    "embed_hash": "what its vector was made from",
    "bm25": "its BM25 parameters",
    "title_cut": "how much of its title line was embedded",
    "created_at": "when the chunk was stored",
}


def reserved_fields(doc: Document) -> Failure | None:
    """``doc`` refused, naming each of its fields that has the name of one of
    :data:`RESERVED_FIELDS` and the document (its line, file or url); None when it has none."""
    taken = [k for k in doc.metadata if k in RESERVED_FIELDS]
    if not taken:
        return None
    names = ", ".join(f'"{k}" ({RESERVED_FIELDS[k]})' for k in taken)
    what, are, value, it = (
        ("its field", "is a name", "its value", "it")
        if len(taken) == 1
        else ("its fields", "are names", "their values", "them")
    )
    return Failure(
        doc.source or doc.url or doc.doc_id,
        f"not ingested: {what} {names} {are} ragsonde writes in every chunk's payload itself, "
        f"so {value} would be lost. Rename {it} in the source "
        f'(e.g. "source_{taken[0]}") and ingest again.',
    )
