"""A SciFact slice ingested once with the real model, and its fully labelled evaluation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragsonde.config import Settings
from ragsonde.evaluate import EvalOptions, EvalReport, evaluate
from ragsonde.testing.beir import beir_slice
from ragsonde.workspace import Workspace

#: Test queries in the slice, and distractor documents beside theirs.
SLICE_QUERIES, SLICE_EXTRA = 120, 250


@pytest.fixture(scope="session")
def estimate_slice(scifact_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return beir_slice(scifact_dir, tmp_path_factory.mktemp("estimate-slice"), SLICE_QUERIES,
                      SLICE_EXTRA)  # fmt: skip


@pytest.fixture(scope="session")
def estimate_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("estimate-home")


@pytest.fixture(scope="session")
def slice_report(estimate_slice: Path, estimate_home: Path, embedder: Any) -> EvalReport:
    """Every slice query labelled (the truth the tests hide labels from); ingests the slice
    into ``slice`` (dense only) on first use."""
    settings = Settings(home=estimate_home, collection="slice")
    with Workspace(settings, embedder=embedder) as ws:
        options = EvalOptions(k=[10], throughput=False)
        return evaluate(estimate_slice, options, ws, ingest=True, record=False)
