"""Small real collections for the tune tests.

``clustered_store``: an embedded Edge collection of 600 clustered random vectors (no model), for
engine-level knob tests. ``scifact_slice``: a BEIR slice of SciFact (25 test queries, their
documents and 250 others), and ``slice_home``: that slice embedded with the real model and BM25
into an embedded collection, built once per session.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.models.points import PointRecord
from ragsonde.models.store import Store
from ragsonde.store import open_store
from tests.tune.support import SLICE_EXTRA, SLICE_QUERIES, clustered, fill_from_slice, make_slice


@pytest.fixture(scope="session")
def scifact_slice(scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_slice(
        scifact_dir, tmp_path_factory.mktemp("tune-slice"), SLICE_QUERIES, SLICE_EXTRA
    )


@pytest.fixture(scope="session")
def slice_home(scifact_slice: Path, embedder, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("tune-home")
    store = open_store(Settings(home=home))
    try:
        fill_from_slice(store, "slice", scifact_slice, embedder)
    finally:
        store.close()
    return home


@pytest.fixture
def clustered_store(tmp_path: Path) -> Iterator[Store]:
    """An embedded collection ``pts``: 600 clustered vectors, 2 points per document."""
    store = open_store(Settings(home=tmp_path / "home"))
    x = clustered()
    store.create_collection("pts", x.shape[1])
    store.upsert(
        "pts",
        [PointRecord(str(i), row.tolist(), {"doc_id": f"d{i // 2}"}) for i, row in enumerate(x)],
    )
    store.build_index("pts")
    try:
        yield store
    finally:
        store.close()
