"""Shared fixtures: the real model, real stores (embedded Edge and qdrant-client local mode)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.embedders.local import LocalEmbedder
from tests.support import SCIFACT


@pytest.fixture(scope="session")
def scifact_dir() -> Path:
    if not (SCIFACT / "corpus.jsonl").is_file():
        pytest.skip(f"SciFact data not found at {SCIFACT}")
    return SCIFACT


@pytest.fixture(scope="session")
def embedder() -> LocalEmbedder:
    """The real default model, loaded once for the whole run."""
    return LocalEmbedder("sentence-transformers/all-MiniLM-L6-v2")


@pytest.fixture
def edge_settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path / "home", collection="docs")


@pytest.fixture(params=["edge", "memory"])
def store_settings(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Settings]:
    """Settings for each store: embedded Edge, and qdrant-client's local mode (QDRANT_URL=:memory:)."""
    if request.param == "edge":
        yield Settings(home=tmp_path / "home", collection="docs")
    else:
        yield Settings(home=tmp_path / "home", collection="docs", qdrant_url=":memory:")
