"""LangChain's own conformance suite for third-party retrievers, run unmodified against ragsonde's
LangChain retriever over a real embedded Qdrant Edge collection and the real model.

``langchain_tests`` asks every retriever to pass ``RetrieversIntegrationTests``; its
``test_no_overrides_DO_NOT_OVERRIDE`` fails if a standard test is skipped or overridden here, so
this class only says what to build and what to ask.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain_tests")

from langchain_tests.integration_tests import RetrieversIntegrationTests

from ragsonde.config import Settings
from ragsonde.integrations.langchain import RagsondeRetriever
from ragsonde.retriever import Retriever
from ragsonde.store import open_store
from tests.support import fill

#: The suite has one async test; pytest-asyncio runs it (strict mode: only what is marked). The
#: mark can only reach it through the module (marking it alone would override it), so the
#: plugin's note that the sync tests carry it too is expected here.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.asyncio,
    pytest.mark.filterwarnings(
        "ignore:.*marked with '@pytest.mark.asyncio' but it is not an async"
    ),
]


@pytest.fixture(scope="module")
def standard_home(tmp_path_factory: pytest.TempPathFactory, embedder: Any) -> Path:
    path = tmp_path_factory.mktemp("lc_standard")
    store = open_store(Settings(home=path))
    fill(store, embedder, "docs")
    store.close()
    return path


class TestRagsondeRetrieverStandard(RetrieversIntegrationTests):
    """The suite as LangChain ships it; ``k`` is its default name for the number of results."""

    ragsonde: Retriever | None = None

    @pytest.fixture(autouse=True)
    def _open(self, standard_home: Path, embedder: Any) -> Iterator[None]:
        with Retriever(Settings(home=standard_home, collection="docs"), embedder=embedder) as r:
            type(self).ragsonde = r
            yield
        type(self).ragsonde = None

    @property
    def retriever_constructor(self) -> type[RagsondeRetriever]:
        return RagsondeRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"retriever": self.ragsonde}

    @property
    def retriever_query_example(self) -> str:
        return "how does lidar measure distance?"
