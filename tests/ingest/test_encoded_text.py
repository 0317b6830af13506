"""Reading back what ingest embedded (``encoded_text``) and re-encoding BM25 vectors from stored
payloads as ingest would (``bm25_reencoder``): the real chunker and the engine's BM25; no model."""

from __future__ import annotations

from typing import Any

import pytest

from ragsonde.embedders.sparse import Bm25Encoder
from ragsonde.ingest.chunker import Chunker, ChunkerConfig
from ragsonde.ingest.document import Document, Section
from ragsonde.ingest.pipeline import bm25_reencoder, chunk_document, encoded_text
from ragsonde.models.index import Bm25Params
from ragsonde.models.payload import LAYOUTS

CHUNKER = Chunker(ChunkerConfig(size=400, overlap=0, tokenizer=None, unit="characters"))
BODY = "The lidar times laser pulses. " * 3


def _doc(embed_title: bool = True) -> Document:
    return Document(
        doc_id="lidar.md",
        sections=(Section(("Care",), BODY), Section((), "Keep the window clean.")),
        title="Lidar",
        embed_title=embed_title,
    )


@pytest.mark.parametrize("sparse", [True, "bm25-k0.9-b0.4-t2"])
def test_the_prefix_comes_back_when_the_hash_proves_it(sparse: bool | str) -> None:
    records = chunk_document(_doc(), CHUNKER, "local:m", sparse)
    assert [r.embed_text.split("\n")[0] for r in records] == ["Lidar: Care", "Lidar"]
    for r in records:
        assert encoded_text(r.payload) == r.embed_text
        assert r.payload.get("bm25") == (sparse if isinstance(sparse, str) else None)


def test_plain_text_when_the_hash_does_not_prove_a_prefix() -> None:
    # a document embedded without its title (a BEIR corpus: the title is in the text already)
    [plain, _] = chunk_document(_doc(embed_title=False), CHUNKER, "local:m", True)
    assert encoded_text(plain.payload) == plain.payload["text"] == plain.embed_text
    # another embedder, or another text, than the hash was made of
    [record, _] = chunk_document(_doc(), CHUNKER, "local:m", True)
    assert encoded_text({**record.payload, "embedder": "local:other"}) == record.payload["text"]
    assert encoded_text({**record.payload, "embed_hash": "0" * 64}) == record.payload["text"]
    no_hash = {k: v for k, v in record.payload.items() if k != "embed_hash"}
    assert encoded_text(no_hash) == record.payload["text"]


def test_a_foreign_collection_gives_its_mapped_text() -> None:
    langchain: dict[str, Any] = {
        "page_content": "Laser pulses, timed.",
        "metadata": {"title": "Lidar", "source": "lidar.md"},
    }
    assert encoded_text(langchain) == "Laser pulses, timed."
    assert encoded_text(langchain, LAYOUTS["langchain"].mapping) == "Laser pulses, timed."


def test_reencoding_stored_payloads_gives_what_ingest_encodes() -> None:
    params = Bm25Params(k1=0.9, b=0.4, title_weight=2)
    records = chunk_document(_doc(), CHUNKER, "local:m", params.label)
    encoder = Bm25Encoder.for_params(params)
    ingested = encoder.embed_documents([f"Lidar\nLidar\n{r.embed_text}" for r in records])
    assert bm25_reencoder(params)([r.payload for r in records]) == ingested
    # the title weight is what makes the difference
    assert bm25_reencoder(Bm25Params(k1=0.9, b=0.4))([r.payload for r in records]) != ingested
