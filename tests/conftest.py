"""Shared fixtures: the real model, real stores (embedded Edge and qdrant-client local mode).

Which tests are ``slow`` (``make test-fast`` runs the others): every test that uses a fixture in
:data:`SLOW_FIXTURES` is marked here, at collection, so a new test that takes the model or a
browser is slow without anyone remembering it. Tests that start processes carry the mark in their
module. A test left unmarked that loads the model anyway fails (see :func:`pytest_runtest_call`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragsonde.config import Settings
from ragsonde.embedders.local import LocalEmbedder
from tests.support import SCIFACT

#: Fixtures that load the real model or start a browser: a test using one (directly or through
#: another fixture) is ``slow``.
SLOW_FIXTURES = frozenset({"embedder", "browser"})
#: Modules only the model brings in: if a test not marked slow imports them, it loaded the model.
MODEL_MODULES = ("torch", "sentence_transformers")
_MODEL_BEFORE = pytest.StashKey[bool]()


def _model_loaded() -> bool:
    return any(m in sys.modules for m in MODEL_MODULES)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    item.stash[_MODEL_BEFORE] = _model_loaded()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """Fail a test that is not marked slow but loaded the model (in its fixtures or its body):
    ``make test-fast`` would otherwise quietly become the slow suite. (It can only see the first
    such test of a run: the model stays loaded.)"""
    result = yield
    if (
        item.get_closest_marker("slow") is None
        and not item.stash.get(_MODEL_BEFORE, True)
        and _model_loaded()
    ):
        raise pytest.fail.Exception(
            f"{item.nodeid} loads the model but is not marked slow: add @pytest.mark.slow"
        )
    return result


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


@pytest.fixture(scope="session")
def sample_home(tmp_path_factory: pytest.TempPathFactory, embedder: LocalEmbedder) -> Path:
    """The sample robotics docs ingested once with the real model (collection ``robotics``)."""
    from ragsonde.ingest import ingest
    from ragsonde.samples import robotics_docs

    home = tmp_path_factory.mktemp("evalhome")
    ingest(
        str(robotics_docs()), settings=Settings(home=home, collection="robotics"), embedder=embedder
    )
    return home


@pytest.fixture(scope="session")
def validate_report() -> Callable[[dict[str, Any]], None]:
    """Fails when a report's JSON breaks the published schema (``report.schema.json``)."""
    import json

    import jsonschema

    from ragsonde.evaluate.schema import SCHEMA_FILE

    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)

    def check(doc: dict[str, Any]) -> None:
        validator.validate(doc)

    return check
