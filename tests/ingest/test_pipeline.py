"""Ingestion end to end: real sample docs, the real model, both real stores."""

from __future__ import annotations

import hashlib
import shutil
import uuid
from datetime import datetime

import numpy as np
import pytest

from ragsonde.errors import DimensionMismatchError, QueryValidationError
from ragsonde.ingest import IngestOptions, chunk_id, ingest
from ragsonde.ingest.chunker import Chunker, ChunkerConfig
from ragsonde.retriever import Retriever
from ragsonde.samples import robotics_docs
from ragsonde.store import open_store

PAGES = ["lidar", "imu", "docking", "safety-e-stop", "gps"]


@pytest.fixture
def docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in PAGES:
        shutil.copy(robotics_docs() / f"{name}.md", folder / f"{name}.md")
    return folder


@pytest.fixture
def store(store_settings):
    st = open_store(store_settings)
    yield st
    st.close()


def run(docs, store, settings, embedder, **opts):
    return ingest(
        str(docs),
        settings=settings,
        store=store,
        embedder=embedder,
        options=IngestOptions(**opts),
    )


def points(store, name="docs"):
    return [p for batch in store.scroll(name) for p in batch]


def test_first_ingest_writes_every_chunk_with_its_payload(docs, store, store_settings, embedder):
    report = run(docs, store, store_settings, embedder)
    assert report.documents == len(PAGES)
    assert report.failed == []
    assert report.embedded == report.chunks > len(PAGES)
    stored = points(store)
    assert len(stored) == report.chunks == store.count("docs")
    by_doc: dict[str, list[int]] = {}
    for p in stored:
        pl = p.payload
        assert pl["content_hash"] == hashlib.sha256(pl["text"].encode()).hexdigest()
        assert pl["url"].startswith("https://docs.rover.example/")
        assert pl["title"] and pl["category"] in {"sensors", "navigation", "operations"}
        assert pl["embedder"] == embedder.name
        assert datetime.fromisoformat(pl["created_at"]).tzinfo is not None
        assert p.id == chunk_id(pl["doc_id"], pl["chunk_index"])
        uuid.UUID(p.id)
        by_doc.setdefault(pl["doc_id"], []).append(pl["chunk_index"])
    assert sorted(by_doc) == sorted(PAGES)
    for indexes in by_doc.values():
        assert sorted(indexes) == list(range(len(indexes)))
    sections = {p.payload["section"] for p in stored if p.payload["doc_id"] == "lidar"}
    assert any(s and s.startswith("Lidar > ") for s in sections)


def test_no_chunk_is_longer_than_the_model_reads(docs, store, store_settings, embedder):
    run(docs, store, store_settings, embedder)
    tok = Chunker(ChunkerConfig.for_embedder(embedder))
    window = embedder.max_tokens - 2
    for p in points(store):
        prefix = ": ".join(x for x in (p.payload["title"], p.payload["section"]) if x) + "\n"
        assert tok.length(prefix + p.payload["text"]) <= window


def test_reingest_is_an_upsert_and_embeds_nothing(docs, store, store_settings, embedder):
    first = run(docs, store, store_settings, embedder)
    before = {p.id: p.payload for p in points(store)}
    again = run(docs, store, store_settings, embedder)
    assert (again.embedded, again.rewritten, again.skipped) == (0, 0, first.chunks)
    assert again.deleted == 0
    assert {p.id: p.payload for p in points(store)} == before  # not even rewritten


class _Counted:
    """The real embedder, counting the texts it embeds for documents."""

    def __init__(self, embedder):
        self._embedder = embedder
        self.texts = 0

    def __getattr__(self, name):
        return getattr(self._embedder, name)

    def embed_documents(self, texts):
        self.texts += len(texts)
        return self._embedder.embed_documents(texts)


def test_a_change_to_the_payload_alone_is_counted_rewritten_not_unchanged(
    docs, store, store_settings, embedder
):
    """Front matter that reaches the payload and not the embedded text (``category``): its
    chunks are written again with their stored vectors, not embedded. They were counted with
    the chunks stored as they were: "0 embedded, N unchanged" for a run that wrote N' of them."""
    first = run(docs, store, store_settings, embedder)
    ids = [p.id for p in points(store) if p.payload["doc_id"] == "lidar"]
    vectors = {p.id: p.vector for p in store.retrieve("docs", ids, with_vectors=True)}
    page = docs / "lidar.md"
    page.write_text(page.read_text().replace("category: sensors", "category: perception", 1))
    counted = _Counted(embedder)
    second = run(docs, store, store_settings, counted)
    assert (second.embedded, second.rewritten, second.skipped) == (
        0,
        len(ids),
        first.chunks - len(ids),
    )
    assert counted.texts == 0
    assert second.to_json()["rewritten"] == len(ids)
    after = store.retrieve("docs", ids, with_vectors=True)
    assert {p.payload["category"] for p in after} == {"perception"}
    for p in after:  # kept, not embedded again (a cosine store normalizes it once more)
        assert np.allclose(p.vector, vectors[p.id], rtol=0, atol=1e-6)
    third = run(docs, store, store_settings, embedder)
    assert (third.embedded, third.rewritten, third.skipped) == (0, 0, first.chunks)


def test_an_edited_document_reembeds_only_what_changed(docs, store, store_settings, embedder):
    first = run(docs, store, store_settings, embedder)
    page = docs / "gps.md"
    text = page.read_text()
    last_section = text.rindex("\n## ")
    page.write_text(text[:last_section] + "\n## Antenna\n\nUse a ground plane of 10 cm.\n")
    second = run(docs, store, store_settings, embedder)
    assert 0 < second.embedded < first.chunks
    stored = points(store)
    assert len(stored) == second.chunks
    gps = sorted(p.payload["chunk_index"] for p in stored if p.payload["doc_id"] == "gps")
    assert gps == list(range(len(gps)))
    assert any("ground plane of 10 cm" in p.payload["text"] for p in stored)


def test_a_shrunk_document_loses_its_tail_and_prune_drops_removed_ones(
    docs, store, store_settings, embedder
):
    first = run(docs, store, store_settings, embedder)
    lidar_before = sum(1 for p in points(store) if p.payload["doc_id"] == "lidar")
    assert lidar_before > 1
    (docs / "lidar.md").write_text("---\ntitle: Lidar\n---\n# Lidar\n\nShort page now.\n")
    (docs / "imu.md").unlink()
    second = run(docs, store, store_settings, embedder)
    lidar = [p for p in points(store) if p.payload["doc_id"] == "lidar"]
    assert len(lidar) == 1 and lidar[0].payload["text"] == "Short page now."
    assert second.deleted == lidar_before - 1
    assert any(p.payload["doc_id"] == "imu" for p in points(store))  # kept without --prune
    third = run(docs, store, store_settings, embedder, prune=True)
    assert third.deleted > 0 and third.embedded == 0
    assert not any(p.payload["doc_id"] == "imu" for p in points(store))
    assert store.count("docs") == third.chunks < first.chunks


def test_bad_files_are_listed_and_the_rest_is_ingested(docs, store, store_settings, embedder):
    (docs / "latin1.md").write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    (docs / "empty.md").write_text("---\ntitle: Empty\n---\n\n")
    (docs / "notes.txt").write_text("Plain text notes about wheel slip on wet floors.")
    report = run(docs, store, store_settings, embedder)
    failed = {f.source: f.reason for f in report.failed}
    assert set(failed) == {"latin1.md", "empty.md"}
    assert "UTF-8" in failed["latin1.md"] and "empty" in failed["empty.md"]
    assert report.documents == len(PAGES) + 1
    assert any(p.payload["doc_id"] == "notes" for p in points(store))


def test_files_of_kinds_ingest_does_not_read_are_a_warning(docs, store, store_settings, embedder):
    """A folder of Markdown and PDFs ingested its Markdown and said nothing of the PDFs."""
    (docs / "manual.pdf").write_bytes(b"%PDF-1.4\n")
    (docs / "spec.docx").write_bytes(b"PK\x03\x04")
    (docs / ".hidden.pdf").write_bytes(b"%PDF-1.4\n")  # hidden files are not looked at
    report = run(docs, store, store_settings, embedder)
    (said,) = [w for w in report.warnings if "not read" in w]
    assert said.startswith("2 files were not read") and "manual.pdf" in said
    assert "spec.docx" in said and "Convert PDF or Word files" in said
    assert not report.failed and report.documents == len(PAGES)


def test_a_source_that_fails_to_read_stops_prune_from_deleting_anything(
    docs, store, store_settings, embedder
):
    """``_prune`` kept the failures' *sources* (``lidar.md``, ``docs.jsonl:4``, a sitemap's URL),
    which are not document ids: a page that became unreadable was deleted, exit 0."""
    run(docs, store, store_settings, embedder)
    before = store.count("docs")
    (docs / "lidar.md").write_bytes(b"\xff\xfe caf\xe9\n")  # no longer UTF-8
    (docs / "imu.md").unlink()  # gone: prune would delete it, if it could trust the run
    report = run(docs, store, store_settings, embedder, prune=True)
    assert [f.source for f in report.failed] == ["lidar.md"]
    assert report.deleted == 0 and store.count("docs") == before
    assert any("--prune deleted nothing: 1 source could not be read" in w for w in report.warnings)
    (docs / "lidar.md").unlink()  # the failure fixed: prune runs
    report = run(docs, store, store_settings, embedder, prune=True)
    assert report.failed == [] and report.deleted > 0
    assert {p.payload["doc_id"] for p in points(store)} == set(PAGES) - {"lidar", "imu"}


def test_two_documents_with_one_id_are_a_failure_naming_both(docs, store, store_settings, embedder):
    """``guide.md`` and ``guide.txt`` are both ``guide``: the later replaced the earlier in
    silence, "3 documents" were reported for 2, and every run embedded one again."""
    (docs / "lidar.txt").write_text("Battery: charge the robot overnight.")
    report = run(docs, store, store_settings, embedder)
    (failure,) = report.failed
    assert failure.source == "lidar.txt"
    assert "'lidar' is also the id of lidar.md" in failure.reason
    assert report.documents == len(PAGES)
    stored = [p.payload["text"] for p in points(store) if p.payload["doc_id"] == "lidar"]
    assert stored and not any("overnight" in t for t in stored)
    again = run(docs, store, store_settings, embedder)
    assert again.embedded == 0 and again.skipped == again.chunks  # it settles


def test_ingested_collection_answers_queries(docs, store, store_settings, embedder):
    run(docs, store, store_settings, embedder)
    r = Retriever(store_settings, store=store, embedder=embedder)
    resp = r.retrieve({"query": "how do I calibrate the laser scanner?", "top_k": 3})
    assert resp.status == "success"
    assert resp.results[0].metadata["doc_id"] == "lidar"
    filtered = r.retrieve({"query": "calibration", "filters": {"doc_id": "imu"}, "top_k": 5})
    assert filtered.results and {x.metadata["doc_id"] for x in filtered.results} == {"imu"}


def test_missing_source_and_bad_chunk_sizes_are_clear_errors(
    docs, store, store_settings, embedder, tmp_path
):
    with pytest.raises(QueryValidationError, match="does not exist"):
        run(tmp_path / "nope", store, store_settings, embedder)
    with pytest.raises(QueryValidationError, match="longer than the model reads"):
        run(docs, store, store_settings, embedder, chunk_size=1000)
    with pytest.raises(QueryValidationError, match="chunk-overlap"):
        run(docs, store, store_settings, embedder, chunk_size=100, chunk_overlap=80)


def test_a_collection_of_another_size_is_a_dimension_mismatch(
    docs, store, store_settings, embedder
):
    store.create_collection("docs", 8)
    with pytest.raises(DimensionMismatchError):
        run(docs, store, store_settings, embedder)
