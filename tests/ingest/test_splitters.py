"""The splitters by name, and the chunker's spans: every chunk is a verbatim slice of its text."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.ingest.chunker import Chunker, ChunkerConfig
from ragsonde.ingest.document import Document, Section
from ragsonde.ingest.pipeline import chunk_document
from ragsonde.ingest.splitters import SPLITTERS, split_spans

TEXT = (
    "Lidar measures distance by timing laser pulses. It builds a point cloud.\n\n"
    "Ultrasonic rangefinders emit sound pulses and listen for the echo. They are cheap.\n\n"
    "An IMU combines accelerometers and gyroscopes; gyroscope bias makes heading drift.\n"
) * 4
REMOTE = SimpleNamespace(name="remote:model")  # an embedder without a local tokenizer


def test_character_splitter_spans_are_slices_that_cover_the_text():
    spans = split_spans("recursive-chars", TEXT, 120, 0, None)
    assert len(spans) > 5
    assert all(0 <= s < e <= len(TEXT) and e - s <= 120 for s, e in spans)
    covered = {i for s, e in spans for i in range(s, e)}
    assert all(i in covered for i, ch in enumerate(TEXT) if not ch.isspace())


def test_the_chunker_records_offsets_and_a_splitter_by_name():
    config = ChunkerConfig.for_embedder(REMOTE, 200, 0, "recursive-chars")
    chunker = Chunker(config)
    pieces = chunker.split_at(TEXT)
    assert [TEXT[at : at + len(c)] for at, c in pieces] == [c for _, c in pieces]
    doc = Document("d", (Section(("A",), TEXT.strip(), 5),), title="T")
    records = chunk_document(doc, chunker, "remote:model")
    for r in records:
        start, end = r.payload["start"], r.payload["end"]
        assert TEXT.strip()[start - 5 : end - 5] == r.payload["text"]
    # a section that is not a slice of the document (HTML) records no span
    no_span = chunk_document(Document("d", (Section((), "x " * 50),)), chunker, "remote:model")
    assert "start" not in no_span[0].payload and "end" not in no_span[0].payload


def test_token_splitters_need_the_model_tokenizer_and_names_are_checked():
    assert {"fixed", "recursive", "recursive-chars", "markdown"} <= set(SPLITTERS)
    with pytest.raises(QueryValidationError, match="no local tokenizer"):
        ChunkerConfig.for_embedder(REMOTE, 200, 0, "fixed")
    with pytest.raises(QueryValidationError, match="Unknown splitter"):
        ChunkerConfig.for_embedder(REMOTE, 200, 0, "semantic")
