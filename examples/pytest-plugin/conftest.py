"""The example's fixtures: a collection to test against, and the configuration under test.

A real project points ``ragsonde_settings`` at its own (test) collection; this one ingests the
sample docs that ship with ragsonde.
"""

from __future__ import annotations

from typing import Any

import pytest

from ragsonde.config import Settings, load_settings
from ragsonde.ingest import ingest
from ragsonde.samples import robotics_docs

COLLECTION = "robot_docs"

#: How the application searches. ``good`` keeps results scoring at least 0.3, under the highest
#: threshold that loses no relevant page on these questions (0.38, found with
#: ``ragsonde eval benchmark.jsonl --sweep-thresholds``); ``worse`` raised it to 0.6 "to cut
#: noise", and most questions now get no relevant page at all.
CONFIGS: dict[str, dict[str, Any]] = {
    "good": {"score_threshold": 0.3},
    "worse": {"score_threshold": 0.6},
}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--retrieval-config",
        choices=sorted(CONFIGS),
        default="good",
        help="Which search configuration to test (default: good).",
    )


@pytest.fixture(scope="session")
def docs_collection() -> Settings:
    """The sample docs in a collection of the store under ``RAGSONDE_HOME`` (``./.ragsonde`` by
    default). Ingestion is idempotent: a second run finds every chunk stored and embeds nothing."""
    settings = load_settings(collection=COLLECTION)
    ingest(str(robotics_docs()), settings=settings)
    return settings


@pytest.fixture
def ragsonde_settings(docs_collection: Settings) -> Settings:
    """Overrides the plugin's fixture: evaluate against the collection built above."""
    return docs_collection


@pytest.fixture
def retrieval_config(request: pytest.FixtureRequest) -> dict[str, Any]:
    return CONFIGS[request.config.getoption("--retrieval-config")]
