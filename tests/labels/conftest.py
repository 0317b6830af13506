"""Collections to label: a real embedded store, written through the store interface."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragsonde.config import Settings
from ragsonde.models.store import Store
from ragsonde.store import open_store
from tests.labels.support import fill_sections


@pytest.fixture
def sectioned(tmp_path) -> Iterator[tuple[Settings, Store]]:
    settings = Settings(home=tmp_path / "home", collection="docs")
    store = open_store(settings)
    fill_sections(store)
    yield settings, store
    store.close()


@pytest.fixture
def spanned(tmp_path) -> Iterator[tuple[Settings, Store]]:
    """The sectioned collection whose chunks have their span in their document."""
    settings = Settings(home=tmp_path / "home", collection="docs")
    store = open_store(settings)
    fill_sections(store, spans=True)
    yield settings, store
    store.close()


@pytest.fixture
def bm25_docs(tmp_path, embedder) -> Iterator[tuple[Settings, Store]]:
    """The sectioned collection with the real model's vectors and BM25 ones."""
    settings = Settings(home=tmp_path / "home", collection="docs")
    store = open_store(settings)
    fill_sections(store, embedder=embedder)
    yield settings, store
    store.close()


@pytest.fixture
def api_and_docs(bm25_docs):
    from ragsonde.testing.fake_chat_api import FakeChatAPI

    with FakeChatAPI() as api:
        yield api, bm25_docs


@pytest.fixture(scope="module")
def scifact_small(tmp_path_factory, scifact_dir, embedder) -> Iterator[tuple[Settings, Store]]:
    """A real collection of SciFact test abstracts (those of the first 16 test queries and 20
    others), dense and BM25, ingested by ragsonde; ``<root>/data`` is that BEIR slice, whose
    queries and human labels are a human benchmark of the collection."""
    from ragsonde.ingest import ingest
    from ragsonde.ingest.pipeline import IngestOptions
    from ragsonde.testing import beir_slice

    root = tmp_path_factory.mktemp("scifact_small")
    data = beir_slice(scifact_dir, root / "data", 16, 20)
    settings = Settings(home=root / "home", collection="sci")
    store = open_store(settings)
    ingest(
        str(data),
        settings=settings,
        store=store,
        embedder=embedder,
        options=IngestOptions(sparse=True),
    )
    yield settings, store
    store.close()
