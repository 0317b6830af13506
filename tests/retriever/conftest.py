from __future__ import annotations

import pytest

from ragsonde.retriever import Retriever
from ragsonde.store import open_store
from tests.support import fill


@pytest.fixture
def retriever(store_settings, embedder):
    store = open_store(store_settings)
    fill(store, embedder)
    r = Retriever(store_settings, store=store, embedder=embedder)
    yield r
    store.close()
