"""A heading used as an embedding prefix is bounded, so every chunk's own text is embedded.

CommonMark makes a paragraph directly above a ``---`` line a setext heading: its whole text
becomes the section name, and the ``title: section`` prefix of the chunks below it. Unbounded,
that prefix filled all-MiniLM-L6-v2's 256-piece window and the chunks' own text was cut off.
Real ingest, the real model's tokenizer, and Chroma's pubmed corpus where it happened.
"""

from __future__ import annotations

from typing import Any

import pytest

from ragsonde.config import Settings
from ragsonde.ingest import IngestOptions, ingest
from ragsonde.ingest.chunker import Chunker, ChunkerConfig
from ragsonde.ingest.document import Document, Section
from ragsonde.ingest.parse import parse
from ragsonde.ingest.pipeline import PREFIX_PIECES, chunk_document, encoded_text
from ragsonde.ingest.sources import open_source
from ragsonde.store import open_store
from tests.support import CHUNKING

SENTENCE = (
    "gyroscope bias accumulates while the robot turns across the warehouse floor and "
    "the heading estimate drifts away from true course"
)
PARAGRAPH = " ".join([SENTENCE] * 5)  # 100 words, one line
BODY = " ".join(f"Calibrate the sensor number {i} before every mission." for i in range(40))


def _pieces(embedder: Any, text: str) -> int:
    """Word pieces the model reads for ``text``, [CLS] and [SEP] included (no truncation)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(embedder.tokenizer_path))
    tok.no_truncation()
    return len(tok.encode(text).ids)


def test_a_paragraph_over_dashes_stays_a_heading_but_its_prefix_is_bounded(tmp_path, embedder):
    folder = tmp_path / "docs"
    folder.mkdir()
    text = f"# Drift\n\n{PARAGRAPH}\n---\n\n{BODY}\n"
    (folder / "drift.md").write_text(text, encoding="utf-8")
    settings = Settings(home=tmp_path / "home", collection="drift")
    ingest(str(folder), settings=settings, embedder=embedder, options=IngestOptions())
    store = open_store(settings)
    try:
        points = [p.payload for batch in store.scroll("drift") for p in batch]
    finally:
        store.close()
    under = [p for p in points if p["section"] != "Drift"]
    assert len(under) >= 2  # the body is longer than one window
    # CommonMark: the paragraph over "---" is a setext h2 (a heading, not a thematic break)
    assert {p["section"] for p in under} == {f"Drift > {PARAGRAPH}"}
    for p in under:
        embedded = encoded_text(p)
        prefix, own = embedded.split("\n", 1)
        assert own == p["text"] and p["text"] in text  # the chunk's own text, whole
        assert embedded.startswith("Drift: Drift > gyroscope bias")
        assert p["title_cut"] == len(prefix) and _pieces(embedder, prefix) - 2 <= PREFIX_PIECES
        # nothing past the window: the model reads the whole chunk
        assert _pieces(embedder, embedded) <= embedder.max_tokens, p["chunk_index"]
        assert p["text"] == text[p["start"] : p["end"]]


def test_every_pubmed_chunk_fits_the_window_with_its_prefix(embedder):
    path = CHUNKING / "corpora" / "pubmed.md"
    if not path.is_file():
        pytest.skip(f"{path} is not here (the shared benchmark data)")
    [doc] = list(open_source(str(path)))
    sections = parse("markdown", path.read_text(encoding="utf-8")).sections
    assert max(len(s.name or "") for s in sections) > 500  # the paragraph over " =" is there
    chunker = Chunker(ChunkerConfig.for_embedder(embedder))
    records = chunk_document(doc, chunker, embedder.name)
    cut = [r for r in records if "title_cut" in r.payload]
    assert cut  # the long heading's chunks had their prefix bounded
    too_long = [r.payload["chunk_index"] for r in records if _pieces(embedder, r.embed_text) > 256]
    assert too_long == []
    assert all(r.embed_text.endswith(r.payload["text"]) for r in records)


def test_a_character_chunker_bounds_the_prefix_and_encoded_text_reads_it_back():
    chunker = Chunker(ChunkerConfig(size=400, overlap=0, tokenizer=None, unit="characters"))
    doc = Document("drift", (Section(("Drift", PARAGRAPH), BODY, 0),), title="Robots")
    records = chunk_document(doc, chunker, "local:m", True)
    assert len(records) > 1
    label = f"Robots: Drift > {PARAGRAPH}"
    for r in records:
        prefix, own = r.embed_text.split("\n", 1)
        assert own == r.payload["text"] and label.startswith(prefix)
        assert len(prefix) <= 4 * PREFIX_PIECES and label[len(prefix)] == " "  # between words
        assert r.payload["title_cut"] == len(prefix)
        assert encoded_text(r.payload) == r.embed_text  # the hash proves the bounded prefix
        assert len(r.embed_text) <= 400  # the whole chunk fits the size, prefix included
    # a short heading is whole, and records no cut
    [short] = chunk_document(Document("d", (Section(("Care",), "Keep it clean."),)), chunker, "m")
    assert short.embed_text == "Care\nKeep it clean." and "title_cut" not in short.payload
