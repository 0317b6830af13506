"""A configuration's chunks of the documents, cut by ingest's own chunker.

``ragsonde``'s are :func:`~ragsonde.ingest.pipeline.chunk_document`'s, each embedded after its
``title: section`` line; a splitter configuration's are those of the
:class:`~ragsonde.ingest.chunker.Chunker` ``ragsonde ingest --chunking`` builds from what
``--save-config`` wrote, so what the sweep measures is what ingest makes of its choice (before
the room ingest leaves for the title line). Either splits a section longer than
:data:`~ragsonde.ingest.chunker.WINDOW_CHARS` window by window: the splitters' time grows with
the square of a paragraph's length, and split whole, one paragraph of a few MB took minutes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragsonde.chunking.checks import whole_document
from ragsonde.chunking.configs import RAGSONDE, ChunkingConfig
from ragsonde.ingest.chunker import Chunker, ChunkerConfig
from ragsonde.ingest.document import Document
from ragsonde.ingest.pipeline import chunk_document

__all__ = ["Chunk", "config_chunks", "splitter_chunker"]


@dataclass(frozen=True)
class Chunk:
    doc_id: str
    start: int
    end: int
    text: str
    """What is embedded (ragsonde's own chunks: with their ``title: section`` line)."""


def config_chunks(
    config: ChunkingConfig,
    docs: Sequence[Document],
    embedder: Any,
    within_sections: bool = True,
) -> list[Chunk]:
    """``config``'s chunks of ``docs``, section by section (``within_sections=False``: each
    document as a whole); a section that is not a verbatim slice of its document has no span to
    score, and gives none."""
    out: list[Chunk] = []
    if config.splitter == RAGSONDE:
        chunker = Chunker(
            ChunkerConfig.for_embedder(embedder, config.size or None, config.overlap or None)
        )
        for doc in docs:
            for r in chunk_document(doc, chunker, embedder.name):
                if "start" in r.payload:
                    out.append(
                        Chunk(doc.doc_id, r.payload["start"], r.payload["end"], r.embed_text)
                    )
        return out
    chunker = splitter_chunker(config, embedder)
    for doc in docs:
        whole = None if within_sections else whole_document(doc)
        for section in doc.sections if whole is None else (whole,):
            if section.offset is None:
                continue
            for at, piece in chunker.split_at(section.text):
                start = section.offset + at
                out.append(Chunk(doc.doc_id, start, start + len(piece), piece))
    return out


def splitter_chunker(config: ChunkingConfig, embedder: Any) -> Chunker:
    """Ingest's chunker for a splitter configuration, without ingest's check that its size fits
    the model (the sweep measures the sizes ingest refuses too)."""
    tokenizer = getattr(embedder, "tokenizer_path", None) if config.unit == "tokens" else None
    return Chunker(
        ChunkerConfig(
            size=config.size,
            overlap=config.overlap,
            tokenizer=tokenizer,
            unit=config.unit,
            splitter=config.splitter,
        )
    )
