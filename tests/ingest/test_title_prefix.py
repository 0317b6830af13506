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
    tok.no_padding()
    return len(tok.encode(text).ids)


@pytest.mark.parametrize(
    ("underline", "prefix_start"),
    [
        # a setext h2 under "# Drift": the prefix is "Drift: Drift > <the paragraph>"
        ("---", "Drift: Drift > gyroscope bias"),
        # a setext h1 is the title and the section: "<the paragraph>: <the paragraph>", longer
        # than the window on its own (pubmed's case)
        ("===", "gyroscope bias"),
    ],
)
def test_a_paragraph_over_an_underline_stays_a_heading_but_its_prefix_is_bounded(
    tmp_path, embedder, underline, prefix_start
):
    folder = tmp_path / "docs"
    folder.mkdir()
    top = "# Drift\n\n" if underline == "---" else ""
    text = f"{top}{PARAGRAPH}\n{underline}\n\n{BODY}\n"
    (folder / "drift.md").write_text(text, encoding="utf-8")
    settings = Settings(home=tmp_path / "home", collection="drift")
    # sparse too: encoded_text proves the prefix by the hash of the BM25-keyed embed_text
    ingest(str(folder), settings=settings, embedder=embedder, options=IngestOptions(sparse=True))
    store = open_store(settings)
    try:
        points = [p.payload for batch in store.scroll("drift") for p in batch]
    finally:
        store.close()
    assert len(points) >= 2  # the body is longer than one window
    # CommonMark: a paragraph over "---" or "===" is a setext heading, not a thematic break
    assert {p["section"] for p in points} == {PARAGRAPH if top == "" else f"Drift > {PARAGRAPH}"}
    for p in points:
        embedded = encoded_text(p)
        prefix, own = embedded.split("\n", 1)
        assert own == p["text"] == text[p["start"] : p["end"]]  # the chunk's own text, whole
        assert embedded.startswith(prefix_start)
        # nothing past the window: the model reads the whole chunk, and the prefix is small
        assert _pieces(embedder, embedded) <= embedder.max_tokens, p["chunk_index"]
        assert _pieces(embedder, prefix) - 2 <= PREFIX_PIECES
        assert p["title_cut"] == len(prefix)


def test_every_pubmed_chunk_fits_the_window_with_its_prefix(embedder):
    path = CHUNKING / "corpora" / "pubmed.md"
    if not path.is_file():
        pytest.skip(f"{path} is not here (the shared benchmark data)")
    parsed = parse("markdown", path.read_text(encoding="utf-8"))
    # the sections under the paragraph that " =" underlines (a setext h1): the case that broke
    long = tuple(s for s in parsed.sections if len(s.name or "") > 500)
    assert long
    doc = Document("pubmed", long, title=parsed.title)
    chunker = Chunker(ChunkerConfig.for_embedder(embedder))
    records = chunk_document(doc, chunker, embedder.name)
    too_long = [r.payload["chunk_index"] for r in records if _pieces(embedder, r.embed_text) > 256]
    assert records and too_long == []
    assert all("title_cut" in r.payload for r in records)
    assert all(r.embed_text.endswith("\n" + r.payload["text"]) for r in records)


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
