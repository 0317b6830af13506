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
from typing import TYPE_CHECKING, Any

import pytest

from ragsonde.config import Settings
from ragsonde.embedders import get_embedder
from ragsonde.embedders.onnx import OnnxEmbedder

if TYPE_CHECKING:
    from ragsonde.embedders.local import LocalEmbedder
    from ragsonde.evaluate.versus import VersusReport
    from ragsonde.testing import FakeEmbeddingAPI
from tests.support import HASHED, SCIFACT, SMALL, versus_in

#: pytest's own ``pytester`` (a user's suite run with the plugin: tests/testing).
pytest_plugins = ("pytester",)

#: Fixtures that load the real model or start a browser: a test using one (directly or through
#: another fixture) is ``slow``.
SLOW_FIXTURES = frozenset({"embedder", "torch_embedder", "browser"})
#: Modules only the model brings in (either backend's runtime): if a test not marked slow imports
#: them, it loaded the model.
MODEL_MODULES = ("torch", "sentence_transformers", "onnxruntime")
_MODEL_BEFORE = pytest.StashKey[bool]()
MODEL = "sentence-transformers/all-MiniLM-L6-v2"


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
def embedder() -> OnnxEmbedder:
    """The real default model on the default backend (ONNX Runtime, what users run), loaded once
    for the whole run."""
    emb = get_embedder(Settings(embedder=f"local:{MODEL}"))
    assert isinstance(emb, OnnxEmbedder), f"the default backend is not ONNX: {emb!r}"
    emb.load()
    return emb


@pytest.fixture(scope="session")
def torch_embedder() -> LocalEmbedder:
    """The same model on the torch backend (sentence-transformers), for the tests about torch."""
    from ragsonde.embedders.local import LocalEmbedder

    return LocalEmbedder(MODEL)


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
def sample_home(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxEmbedder) -> Path:
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


@pytest.fixture(scope="session")
def push_home(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxEmbedder) -> Path:
    """An Edge home (released: no store left open) with ``docs``, a real ingest of four sample
    pages, and ``hybrid``, the same plus BM25 vectors: the source of the ``push`` tests."""
    import shutil

    from ragsonde.embedders.sparse import SPARSE_VECTOR_NAME, Bm25Encoder
    from ragsonde.ingest import INDEXED_FIELDS, ingest
    from ragsonde.models.points import PointRecord
    from ragsonde.samples import robotics_docs
    from ragsonde.store.edge import EdgeStore

    root = tmp_path_factory.mktemp("push")
    docs = root / "docs"
    docs.mkdir()
    for name in ("lidar", "imu", "gps", "docking"):
        shutil.copy(robotics_docs() / f"{name}.md", docs / f"{name}.md")
    store = EdgeStore(root / "home")
    ingest(
        str(docs),
        settings=Settings(home=root / "home"),
        store=store,
        embedder=embedder,
        collection="docs",
    )
    # As bench/bench_modes.py builds it: dense vectors copied, BM25 from the stored text.
    store.create_collection(
        "hybrid",
        embedder.dimension,
        sparse_vector_name=SPARSE_VECTOR_NAME,
        indexed_fields=INDEXED_FIELDS,
    )
    bm25 = Bm25Encoder()
    for batch in store.scroll("docs", with_vectors=True):
        sparse = bm25.embed_documents([p.payload["text"] for p in batch])
        store.upsert(
            "hybrid",
            [PointRecord(p.id, p.vector, p.payload, s) for p, s in zip(batch, sparse, strict=True)],
        )
    store.build_index("hybrid")
    store.close()  # the CLI tests must be able to take the lock
    return root / "home"


@pytest.fixture(scope="session")
def versus_api() -> Iterator[FakeEmbeddingAPI]:
    """The loopback OpenAI-compatible fake serving B's 64-d hash-seeded vectors."""
    from ragsonde.testing import FakeEmbeddingAPI

    with FakeEmbeddingAPI(openai_dim=64) as server:
        yield server


@pytest.fixture(scope="session")
def versus_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("versushome")


@pytest.fixture(scope="session")
def versus_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first ``SMALL`` sample queries: runs on collections that exist cost only their queries."""
    from ragsonde.samples import robotics_benchmark

    path = tmp_path_factory.mktemp("bench") / "small.jsonl"
    lines = robotics_benchmark().read_text(encoding="utf-8").splitlines()[:SMALL]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def versus_settings(versus_home: Path, versus_api: FakeEmbeddingAPI) -> Settings:
    return Settings(home=versus_home, collection="robotics", openai_base_url=f"{versus_api.url}/v1")


@pytest.fixture(scope="session")
def versus(versus_settings: Settings, embedder: OnnxEmbedder) -> VersusReport:
    """A against B on the whole sample benchmark, both collections ingested from the sample docs
    into ``versus_home`` (left there for the tests that reuse them)."""
    from ragsonde.evaluate import EvalOptions
    from ragsonde.samples import robotics_benchmark, robotics_docs

    return versus_in(
        robotics_benchmark(),
        (embedder, HASHED),
        options=EvalOptions(throughput=False),
        corpus=str(robotics_docs()),
        settings=versus_settings,
    )
