"""A German corpus: ``ingest --sparse --bm25-language german`` stems and drops German stop words on
both sides, the collection's recorded language is used at query time, a contradicting setting is
a VALIDATION_ERROR, and a foreign collection (it records nothing) is queried in the setting's
language. The real model, the real CLI and real embedded collections."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragsonde.config import Settings
from ragsonde.embedders.base import Embedder
from ragsonde.embedders.sparse import SPARSE_VECTOR_NAME, Bm25Encoder
from ragsonde.ingest import IngestOptions, ingest
from ragsonde.models.index import Bm25Params
from ragsonde.models.points import PointRecord
from ragsonde.models.store import Store
from ragsonde.retriever import Retriever
from ragsonde.store import open_store

pytestmark = pytest.mark.slow

# inflected forms in the documents, base forms in the queries
_DOCS = {
    "wohnen": "# Wohnen\n\nDie Familien wohnen seit Jahren in alten Häusern am Fluss.\n",
    "schule": "# Schule\n\nDen Kindern gefällt der Unterricht in der neuen Schule.\n",
    "verkehr": "# Verkehr\n\nZüge und Busse fahren täglich über die Brücke in die Stadt.\n",
}
_ENV = {"RAGSONDE_HOME": None, "QDRANT_URL": None, "RAGSONDE_QDRANT_URL": None}


@pytest.fixture
def german(tmp_path: Path, embedder: Embedder) -> Iterator[tuple[Settings, Store]]:
    """Collection ``de`` built with ``ingest --bm25-language german`` (the CLI), ``en`` with the
    defaults (English), both from the same German documents."""
    import ragsonde.cli
    from ragsonde.cli.app import app

    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in _DOCS.items():
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    settings = Settings(home=tmp_path / "home", collection="de")
    ragsonde.cli._register()
    result = CliRunner().invoke(
        app,
        [
            *("ingest", str(folder), "-c", "de", "--home", str(settings.home)),
            *("--sparse", "--bm25-language", "German", "--json"),
        ],
        env=_ENV,
    )
    assert result.exit_code == 0, result.output
    store = open_store(settings)
    opts = IngestOptions(sparse=True)
    ingest(
        str(folder),
        collection="en",
        settings=settings,
        store=store,
        embedder=embedder,
        options=opts,
    )
    yield settings, store
    store.close()


def _top(retriever: Retriever, collection: str, text: str) -> list[str]:
    resp = retriever.retrieve({"query": text, "mode": "sparse", "top_k": 3}, collection=collection)
    assert resp.status == "success", resp.error
    return [str(r.metadata["doc_id"]) for r in resp.results]


def test_a_german_collection_matches_base_forms_the_english_default_misses(
    german: tuple[Settings, Store], embedder: Embedder
) -> None:
    settings, store = german
    labels = {str(p.payload.get("bm25")) for b in store.scroll("de") for p in b}
    assert labels == {Bm25Params(language="german").label}  # recorded in every chunk
    assert all("bm25" not in p.payload for b in store.scroll("en") for p in b)  # as before
    with Retriever(settings, store=store, embedder=embedder) as r:  # no bm25_language setting
        assert _top(r, "de", "Haus")[:1] == ["wohnen"]
        assert _top(r, "de", "Kind")[:1] == ["schule"]
        # queries are stemmed in German too: these plurals would stay whole in English
        assert _top(r, "de", "Häuser")[:1] == ["wohnen"]
        assert _top(r, "de", "Kinder")[:1] == ["schule"]
        assert _top(r, "de", "und der die") == []  # German stop words only
        # the English default: no stemming of German plurals, and German stop words are terms
        assert "wohnen" not in _top(r, "en", "Haus")
        assert "schule" not in _top(r, "en", "Kind")
        assert len(_top(r, "en", "und der die")) >= 2
        # hybrid encodes its BM25 half in the collection's language too
        resp = r.retrieve({"query": "Häuser", "mode": "hybrid", "top_k": 3}, collection="de")
        assert resp.status == "success" and resp.results[0].metadata["doc_id"] == "wohnen"


@pytest.mark.parametrize(
    ("setting", "collection", "recorded"),
    [("english", "de", "german"), ("german", "en", "english")],
)
def test_a_setting_that_contradicts_the_collection_is_a_validation_error(
    german: tuple[Settings, Store], embedder: Embedder, setting: str, collection: str, recorded: str
) -> None:
    settings, store = german
    contrary = settings.model_copy(
        update={"index": settings.index.overlay({"bm25_language": setting})}
    )
    with Retriever(contrary, store=store, embedder=embedder) as r:
        resp = r.retrieve({"query": "Haus", "mode": "sparse"}, collection=collection)
        assert resp.status == "error" and resp.error is not None
        assert resp.error.code == "VALIDATION_ERROR"
        assert f"built for {recorded}" in resp.error.message
        assert f"is {setting}" in resp.error.message
        # dense queries do not use BM25: unaffected
        dense = r.retrieve({"query": "Haus", "mode": "dense"}, collection=collection)
        assert dense.status == "success"
        # the agreeing setting answers
    agreeing = settings.model_copy(
        update={"index": settings.index.overlay({"bm25_language": recorded})}
    )
    with Retriever(agreeing, store=store, embedder=embedder) as r:
        resp = r.retrieve({"query": "Haus", "mode": "sparse"}, collection=collection)
        assert resp.status == "success"


def test_a_foreign_collection_is_queried_in_the_settings_language(
    german: tuple[Settings, Store], embedder: Embedder
) -> None:
    """Another pipeline's chunks (no embed_hash, no bm25 label), BM25-encoded in German."""
    settings, store = german
    encoder = Bm25Encoder.for_params(Bm25Params(language="german"))
    texts = [t.split("\n", 2)[2] for t in _DOCS.values()]
    store.create_collection("foreign", embedder.dimension, sparse_vector_name=SPARSE_VECTOR_NAME)
    store.upsert(
        "foreign",
        [
            PointRecord(str(i), vec.tolist(), {"text": text, "doc_id": name}, sv)
            for i, (name, text, vec, sv) in enumerate(
                zip(
                    _DOCS,
                    texts,
                    embedder.embed_documents(texts),
                    encoder.embed_documents(texts),
                    strict=True,
                )
            )
        ],
    )
    # English BM25 (the default) finds too few of the stored terms in the chunks' text: refused,
    # naming the setting (it answered 'success' with nothing: the English stems match none)
    with Retriever(settings, store=store, embedder=embedder) as r:
        resp = r.retrieve({"query": "Häuser Kinder", "mode": "sparse"}, collection="foreign")
    assert resp.status == "error" and resp.error is not None
    assert resp.error.code == "VALIDATION_ERROR" and "index.bm25_language" in resp.error.message
    assert "(english)" in resp.error.message
    in_german = settings.model_copy(
        update={"index": settings.index.overlay({"bm25_language": "german"})}
    )
    with Retriever(in_german, store=store, embedder=embedder) as r:
        assert _top(r, "foreign", "Häuser")[:1] == ["wohnen"]
        assert _top(r, "foreign", "Kinder")[:1] == ["schule"]
