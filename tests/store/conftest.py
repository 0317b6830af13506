"""Fixtures shared by the store tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.models.store import Store
from ragsonde.store import open_store
from ragsonde.store.edge import EdgeStore


@pytest.fixture
def store(store_settings: Settings) -> Iterator[Store]:
    """An open store of each backend (``store_settings``), closed afterwards."""
    s = open_store(store_settings)
    yield s
    s.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An embedded home holding one empty 3-d collection, ``c``, released (no shard open)."""
    s = EdgeStore(tmp_path)
    s.create_collection("c", 3)
    s.close()
    return tmp_path
