"""The sweep chunks with ingest's own chunker: what ``ragsonde chunking`` measures for a
configuration is what ``ragsonde ingest --chunking`` builds with it, and a section of one endless
paragraph is split window by window, as ingest splits it (whole, the splitters' time grows with
its square: ``sentence 200/0`` had not finished a 4 MB paragraph after 14 minutes). The real
tokenizer of the model; no store."""

from __future__ import annotations

from typing import Any

import pytest

from ragsonde.chunking.chunks import config_chunks
from ragsonde.chunking.configs import DEFAULT_GRID, RAGSONDE, ChunkingConfig, parse_configs
from ragsonde.chunking.corpus import read_documents
from ragsonde.chunking.sweep import _SPECIAL_TOKENS
from ragsonde.ingest.chunker import WINDOW_CHARS, Chunker, ChunkerConfig, windows
from ragsonde.ingest.document import Document, Section
from ragsonde.ingest.splitters import split_spans
from ragsonde.samples import robotics_docs
from tests.support import CHUNKING

pytestmark = pytest.mark.slow

#: Every splitter configuration of the default grid, and the splitters it leaves out.
GRID = [c for c in DEFAULT_GRID if c.splitter != RAGSONDE] + parse_configs(
    ["recursive-chars 800/400", "sentence 100/50", "sentence 200/0"]
)
#: One paragraph, no blank line, two windows long.
PARAGRAPH = "The lidar measures range by timing reflected laser pulses. " * 2_000


def _documents() -> list[Document]:
    """The sample docs and, where the data is, Chroma's state_of_the_union (no section of
    either is near :data:`WINDOW_CHARS`)."""
    docs = read_documents(robotics_docs(), [])
    sotu = CHUNKING / "corpora" / "state_of_the_union.md"
    if sotu.is_file():
        docs += read_documents(sotu, [])
    assert all(len(s.text) < WINDOW_CHARS for d in docs for s in d.sections)
    return docs


def _spans(config: ChunkingConfig, docs: list[Document], embedder: Any) -> list[tuple[Any, ...]]:
    return [(c.doc_id, c.start, c.end) for c in config_chunks(config, docs, embedder)]


@pytest.mark.parametrize("config", GRID, ids=lambda c: c.label)
def test_a_normal_documents_chunks_are_what_the_splitter_made_of_it_whole(
    config: ChunkingConfig, embedder: Any
) -> None:
    """The sweep's chunks before it went through ingest's chunker (each section split whole by
    the splitter), for every configuration of the grid: no section is long enough for a window
    to change them."""
    docs = _documents()
    tokenizer = Chunker(ChunkerConfig.for_embedder(embedder))._tokenizer
    whole = [
        (d.doc_id, s.offset + a, s.offset + b)
        for d in docs
        for s in d.sections
        if s.offset is not None
        for a, b in split_spans(config.splitter, s.text, config.size, config.overlap, tokenizer)
    ]
    assert _spans(config, docs, embedder) == whole


@pytest.mark.parametrize(
    "config",
    [c for c in GRID if c.fits(256 - _SPECIAL_TOKENS)],
    ids=lambda c: c.label,
)
def test_the_sweeps_chunks_are_the_ones_ingest_makes_with_that_configuration(
    config: ChunkingConfig, embedder: Any
) -> None:
    """What ``ingest --chunking`` builds from a saved choice, section by section (before the
    room a ``title: section`` line takes): the same chunks, a long paragraph's too. Ingest cut
    ``fixed 250/125`` with an overlap of 124, not the 125 the sweep had measured."""
    assert embedder.max_tokens == 256
    ingest = Chunker(
        ChunkerConfig.for_embedder(embedder, config.size, config.overlap, config.splitter)
    )
    docs = _documents()
    if config.splitter != "sentence":  # pysbd takes 15 s a window (the last test has one)
        docs.append(Document("long", (Section((), PARAGRAPH, 0),)))
    made = [
        (d.doc_id, s.offset + at, s.offset + at + len(piece))
        for d in docs
        for s in d.sections
        if s.offset is not None
        for at, piece in ingest.split_at(s.text)
    ]
    assert _spans(config, docs, embedder) == made


@pytest.mark.parametrize("label", ["recursive 200/0", "sentence 200/0", "fixed 250/125"])
def test_one_endless_paragraph_reaches_the_splitter_window_by_window(
    label: str, embedder: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every text a splitter is given is at most :data:`WINDOW_CHARS` long: the windows of the
    paragraph, each once. The chunks are spans of the document, in order."""
    given: list[int] = []
    split_window = Chunker._split_window

    def recorded(self: Chunker, text: str, capacity: int) -> list[tuple[int, str]]:
        given.append(len(text))
        return split_window(self, text, capacity)

    monkeypatch.setattr(Chunker, "_split_window", recorded)
    [config] = parse_configs([label])
    text = "# Notes\n\n" + PARAGRAPH
    doc = Document("long", (Section(("Notes",), PARAGRAPH, len("# Notes\n\n")),))
    chunks = config_chunks(config, [doc], embedder)
    assert len(PARAGRAPH) > WINDOW_CHARS
    assert given == [len(w) for _, w in windows(PARAGRAPH)]
    assert max(given) <= WINDOW_CHARS
    assert all(text[c.start : c.end] == c.text for c in chunks)
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)
    assert chunks[-1].end == len(text.rstrip())
