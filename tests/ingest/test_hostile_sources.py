"""What a careless user or an attacker puts in a source: a symlink loop, UTF-16 and binary files,
BEIR rows of the wrong shape, one id twice, one endless paragraph, a field named as one ingest
writes itself. Each ends as a listed failure (the rest ingested) or as chunks that are right,
never a traceback, a hang or wrong data."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ragsonde.config import Settings
from ragsonde.errors import QueryValidationError
from ragsonde.ingest import IngestOptions, IngestReport, ingest, open_source
from ragsonde.ingest.chunker import WINDOW_CHARS, Chunker, ChunkerConfig, windows
from ragsonde.ingest.document import Document, Failure, Section
from ragsonde.ingest.pipeline import chunk_document
from ragsonde.ingest.reserved import RESERVED_FIELDS, reserved_fields
from ragsonde.ingest.sources.beir import BeirCorpus
from ragsonde.ingest.sources.folder import FolderSource
from ragsonde.samples import robotics_docs
from ragsonde.store import open_store


def _ingest(
    source: Path, settings: Settings, embedder: Any, options: IngestOptions | None = None
) -> tuple[IngestReport, list[dict[str, Any]]]:
    """``source`` ingested into a store opened for this run alone (closed after): the report,
    and the payloads of every point the collection then holds (as many as the store counts)."""
    store = open_store(settings)
    try:
        report = ingest(
            str(source),
            settings=settings,
            store=store,
            embedder=embedder,
            options=options or IngestOptions(),
        )
        stored = [p.payload for batch in store.scroll(report.collection) for p in batch]
        assert store.count(report.collection) == len(stored)
        return report, stored
    finally:
        store.close()


def _read(source: FolderSource | BeirCorpus) -> tuple[list[str], dict[str, str]]:
    read = list(source)
    ids = [d.doc_id for d in read if isinstance(d, Document)]
    return ids, {f.source: f.reason for f in read if isinstance(f, Failure)}


def test_an_empty_source_is_refused_not_read_as_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Path("")`` is ``.``: ``ragsonde ingest "$DOCS"`` with DOCS unset ingested the folder it
    was run in (a repository's sources, into the user's collection)."""
    (tmp_path / "a.md").write_text("# Lidar\n\nLidar is a sensor.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for fmt in (None, "folder", "jsonl"):
        with pytest.raises(QueryValidationError, match="source is empty"):
            open_source("", fmt)


def test_a_symlink_loop_is_a_listed_skip_not_a_traceback(tmp_path: Path) -> None:
    """Python 3.11's ``Path.resolve()`` raised RuntimeError on the loop: the whole ingest was a
    traceback, nothing written."""
    (tmp_path / "a.md").write_text("# Lidar\n\nLidar is a sensor.\n", encoding="utf-8")
    (tmp_path / "loop1.md").symlink_to("loop2.md")
    (tmp_path / "loop2.md").symlink_to("loop1.md")
    ids, failed = _read(FolderSource(tmp_path))
    assert ids == ["a"]
    assert set(failed) == {"loop1.md", "loop2.md"}
    assert "symbolic links" in failed["loop1.md"]


@pytest.mark.parametrize(
    ("data", "said"),
    [
        # valid UTF-8, every other byte NUL: it was embedded as "h\x00i\x00 …"
        ("Lidar notes".encode("utf-16-le"), "line 1 holds binary data (NUL bytes), not text"),
        (b"line one\nhello\x00world\n", "line 2 holds binary data (NUL bytes), not text"),
        ("Lidar notes".encode("utf-16"), "it is UTF-16 text"),  # with its byte order mark
        # named as every reader names it (inputs.decoded_lines): the line, the byte within it
        (b"ok\ncaf\xe9\n", "line 2 is not UTF-8 text (invalid continuation byte at byte 3)"),
    ],
)
def test_utf16_and_binary_files_are_skipped_saying_what_they_are(
    tmp_path: Path, data: bytes, said: str
) -> None:
    (tmp_path / "a.md").write_text("# Lidar\n\nLidar is a sensor.\n", encoding="utf-8")
    (tmp_path / "b.txt").write_bytes(data)
    ids, failed = _read(FolderSource(tmp_path))
    assert ids == ["a"]
    assert said in failed["b.txt"] and failed["b.txt"].startswith("skipped: ")


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ({"_id": True, "text": "t"}, '"_id" must be a non-empty string (or an integer), not true'),
        ({"_id": None, "text": "t"}, '"_id" must be a non-empty string'),
        ({"_id": "", "text": "t"}, '"_id" must be a non-empty string'),
        ({"_id": ["l"], "text": "t"}, '"_id" must be a non-empty string'),
        ({"_id": 1.5, "text": "t"}, '"_id" must be a non-empty string'),
        ({"_id": "b", "text": ["list", "of", "words"]}, '"text" must be a string, not list'),
        ({"_id": "b", "title": 5, "text": "t"}, '"title" must be a string, not int'),
        ([1, 2], 'each line is an object with "_id"'),
        # dropped without a word, both
        ({"_id": "b", "text": "t", "metadata": "x"}, '"metadata" must be an object, not str'),
        ({"_id": "b", "text": "t", "metadata": {"url": 5}}, '"metadata.url" must be a string'),
        ({"text": "no id"}, 'each line is an object with "_id"'),
    ],
)
def test_a_beir_row_of_the_wrong_shape_fails_naming_the_field(
    tmp_path: Path, row: object, said: str
) -> None:
    """``str()`` stored ids "True", "None", "" and "['l']", and embedded a list of words as the
    text "['list', 'of', 'words']"; a non-object line was "list indices must be integers"."""
    good = {"_id": 7, "title": "Lidar", "text": "Lidar measures range."}
    (tmp_path / "corpus.jsonl").write_text(
        json.dumps(good) + "\n" + json.dumps(row) + "\n", encoding="utf-8"
    )
    ids, failed = _read(BeirCorpus(tmp_path))
    assert ids == ["7"]  # an integer id is kept
    assert said in failed["corpus.jsonl:2"]


def test_a_beir_rows_metadata_url_is_its_documents_url(tmp_path: Path) -> None:
    """NFCorpus and TREC-COVID give each document's url in ``metadata``: it was dropped (a
    payload's ``url`` is ingest's own), now it is the document's; the rest of ``metadata`` is
    the payload's, as before."""
    row = {"_id": "MED-10", "title": "Statins", "text": "t", "metadata": {"url": "https://x/1"}}
    row["metadata"]["pubmed_id"] = "25329299"
    (tmp_path / "corpus.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    [doc] = list(BeirCorpus(tmp_path))
    assert isinstance(doc, Document)
    assert (doc.url, doc.metadata) == ("https://x/1", {"pubmed_id": "25329299"})


def test_windows_cut_a_long_text_at_its_breaks_and_leave_a_short_one_whole() -> None:
    assert list(windows("short text")) == [(0, "short text")]
    para = "word " * 60_000  # 300,000 characters, one line
    pieces = list(windows(para))
    assert len(pieces) > 2 and all(len(w) <= WINDOW_CHARS for _, w in pieces)
    assert all(para[at : at + len(w)] == w for at, w in pieces)
    assert "".join(w for _, w in pieces) == para
    assert all(w.endswith(" ") for _, w in pieces[:-1])  # between words
    text = ("a" * 70_000 + "\n\n") * 3
    assert [len(w) for _, w in windows(text)] == [70_002] * 3  # at the blank lines


@pytest.mark.slow
def test_one_endless_paragraph_is_chunked_window_by_window(embedder) -> None:
    """semantic-text-splitter's time grows with the square of a paragraph: a 46 MB file of one
    line ran for over an hour in one call Ctrl-C could not stop. Now each window is split on its
    own, and the chunks are still verbatim spans of the text."""
    chunker = Chunker(ChunkerConfig.for_embedder(embedder))
    text = "The lidar measures range by timing reflected laser pulses. " * 5_000
    chunks = chunker.split_at(text)
    assert len(list(windows(text))) > 2
    assert chunks == [(at + s, c) for at, w in windows(text) for s, c in chunker.split_at(w)]
    assert all(text[s : s + len(c)] == c for s, c in chunks)


@pytest.mark.slow
def test_a_repeated_beir_id_names_both_lines(tmp_path: Path, store_settings, embedder) -> None:
    """The failure said "its id 'a' is also the id of a": the id twice, neither line."""
    rows = [
        {"_id": "a", "title": "Lidar", "text": "Lidar measures range."},
        {"_id": "b", "title": "IMU", "text": "An IMU measures acceleration."},
        {"_id": "a", "title": "GPS", "text": "GPS gives a position."},
    ]
    (tmp_path / "corpus.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
    report, stored = _ingest(tmp_path, store_settings, embedder)
    assert len(stored) == report.chunks == 2
    assert report.documents == 2
    [failure] = report.failed
    assert failure.source == "corpus.jsonl:3"
    assert "also the id of corpus.jsonl:1" in failure.reason


@pytest.mark.slow
def test_a_document_emptied_loses_its_chunks_and_does_not_stop_prune(
    tmp_path: Path, store_settings, embedder
) -> None:
    """An emptied file was an "empty document" failure that left all its old chunks searchable,
    and, as a source of unknown documents, stopped ``--prune`` from deleting anything."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("lidar", "imu", "gps"):
        shutil.copy(robotics_docs() / f"{name}.md", docs / f"{name}.md")
    store = open_store(store_settings)

    def run(prune: bool = False) -> IngestReport:
        return ingest(
            str(docs),
            settings=store_settings,
            store=store,
            embedder=embedder,
            options=IngestOptions(prune=prune),
        )

    def counts() -> Counter[str]:
        return Counter(str(p.payload["doc_id"]) for b in store.scroll("docs") for p in b)

    try:
        first = run()
        before = counts()
        assert before["imu"] > 0 and sum(before.values()) == first.chunks
        (docs / "imu.md").write_text("", encoding="utf-8")
        (docs / "gps.md").unlink()
        second = run(prune=True)
        assert [(f.source, f.reason) for f in second.failed] == [("imu.md", "empty document")]
        assert second.warnings == []  # prune went ahead
        assert second.deleted == before["imu"] + before["gps"]
        assert counts() == Counter({"lidar": before["lidar"]})
        assert store.count("docs") == second.chunks
    finally:
        store.close()


class _Sizes:
    """The real embedder, recording how many texts each embed call was given."""

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder
        self.calls: list[int] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._embedder, name)

    def embed_documents(self, texts: Sequence[str]) -> Any:
        self.calls.append(len(texts))
        return self._embedder.embed_documents(texts)


@pytest.mark.slow
def test_one_huge_document_is_embedded_batch_by_batch(
    tmp_path: Path, store_settings, embedder
) -> None:
    """A document's chunks were embedded in one call, however many: a 46 MB text (40,000
    chunks) held all its tokens and vectors at once, over 2 GB, and a 256 MB one could not go in."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "big.txt").write_text(
        "The lidar measures range by timing reflected laser pulses.\n\n" * 400, encoding="utf-8"
    )
    sizes = _Sizes(embedder)
    report, stored = _ingest(docs, store_settings, sizes, IngestOptions(batch_size=8))
    assert report.chunks > 16 and len(stored) == report.chunks == report.embedded
    assert sum(sizes.calls) == report.chunks and max(sizes.calls) <= 8


def test_every_payload_field_ingest_writes_is_a_reserved_name() -> None:
    """The names a document's own fields may not take are exactly those ingest writes: a new
    payload field of ingest's that is not reserved would again replace a user's silently."""
    chunker = Chunker(ChunkerConfig(size=400, overlap=0, tokenizer=None, unit="characters"))
    doc = Document(
        "d", (Section(("Care",), "Keep the window clean. " * 40, 0),), title="Lidar " * 60
    )
    records = chunk_document(doc, chunker, "local:m", "bm25-k0.9-b0.4-t2")
    written = {k for r in records for k in r.payload} | {"created_at"}  # the writer's stamp
    assert written == set(RESERVED_FIELDS)


@pytest.mark.parametrize("name", sorted(RESERVED_FIELDS))
def test_a_document_field_of_a_reserved_name_is_refused_naming_it_and_the_row(name: str) -> None:
    doc = Document(
        "7", (Section((), "t", 0),), metadata={"lang": "en", name: "mine"}, source="rows.jsonl:3"
    )
    refused = reserved_fields(doc)
    assert refused is not None and refused.source == "rows.jsonl:3"
    assert f'its field "{name}" ({RESERVED_FIELDS[name]})' in refused.reason
    assert f'(e.g. "source_{name}")' in refused.reason
    assert reserved_fields(Document("7", (Section((), "t", 0),), metadata={"lang": "en"})) is None


@pytest.mark.slow
def test_a_rows_own_created_at_is_refused_not_overwritten(
    tmp_path: Path, store_settings, embedder
) -> None:
    """A row's ``created_at`` was replaced by the time of the write, its ``section`` and
    ``doc_id`` left out of the payload, all without a word: each such row is a failure naming
    its fields and its line, the others go in, and renamed the field is kept as it was."""
    rows = [
        {"id": "a", "text": "Lidar measures range.", "category": "sensors"},
        {"id": "b", "text": "An IMU measures acceleration.", "created_at": "2019-05-01"},
        {"id": "c", "text": "GPS gives a position.", "section": "Nav", "doc_id": "gps-1"},
    ]
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    before = datetime.now(UTC)
    report, stored = _ingest(source, store_settings, embedder)
    failed = {f.source: f.reason for f in report.failed}
    assert report.documents == 1 and set(failed) == {"rows.jsonl:2", "rows.jsonl:3"}
    assert 'its field "created_at" (when the chunk was stored) is a name' in failed["rows.jsonl:2"]
    assert '"source_created_at"' in failed["rows.jsonl:2"]
    assert 'its fields "section" (the chunk\'s heading path), "doc_id"' in failed["rows.jsonl:3"]
    [payload] = stored
    assert (payload["doc_id"], payload["category"]) == ("a", "sensors")
    assert datetime.fromisoformat(payload["created_at"]) >= before  # ingest's own

    rows[1]["source_created_at"] = rows[1].pop("created_at")
    rows[2] = {"id": "c", "text": "GPS gives a position.", "nav_section": "Nav"}
    source.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report, stored = _ingest(source, store_settings, embedder)
    assert report.failed == [] and report.documents == 3
    by_doc = {p["doc_id"]: p for p in stored}
    assert by_doc["b"]["source_created_at"] == "2019-05-01"
    assert by_doc["b"]["created_at"] != "2019-05-01" and by_doc["c"]["nav_section"] == "Nav"
