"""Fixtures of the history tests: a small real history on a copy of the sample collection.

``story`` evaluates the sample benchmark four times, each after one change, and records every
run in one history file:

1. the baseline;
2. ``hnsw_ef`` changed (a search setting), kept for the next steps;
3. the collection re-ingested with 32-token chunks (index and content);
4. the label file changed (one query's relevant document).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from ragsonde.config import Settings
from ragsonde.embedders.onnx import OnnxEmbedder
from tests.history.support import Story, changed_labels
from tests.support import Cli, evaluate_in


@pytest.fixture(scope="session")
def cli() -> Cli:
    """``ragsonde ARGS`` in process (as tests/cli's fixture), history variables unset."""
    import ragsonde.cli
    from ragsonde.cli.app import app

    ragsonde.cli._register()

    def invoke(*args: str, env: Mapping[str, str | None] | None = None) -> Result:
        full = dict.fromkeys(("RAGSONDE_HOME", "RAGSONDE_HISTORY", "RAGSONDE_RECORD", "QDRANT_URL"))
        full.update(env or {})
        return CliRunner().invoke(app, list(args), env=full)

    return invoke


@pytest.fixture(scope="session")
def story(
    tmp_path_factory: pytest.TempPathFactory, sample_home: Path, embedder: OnnxEmbedder
) -> Story:
    from ragsonde.evaluate import EvalOptions
    from ragsonde.ingest import IngestOptions, ingest
    from ragsonde.samples import robotics_benchmark, robotics_docs

    root = tmp_path_factory.mktemp("story")
    home = root / "home"
    shutil.copytree(sample_home, home, ignore=shutil.ignore_patterns("history.sqlite*"))
    history = root / "history.sqlite"
    bench = robotics_benchmark()
    options = EvalOptions(throughput=False)

    def run(settings: Settings, benchmark: Path = bench) -> int:
        report = evaluate_in(
            benchmark, settings=settings, embedder=embedder, options=options, history=history
        )
        assert report.history_run is not None
        return report.history_run

    base = Settings(home=home, collection="robotics")
    runs = {"baseline": run(base)}
    tuned = base.model_copy(update={"search": base.search.overlay({"hnsw_ef": 8})})  # kept
    runs["hnsw_ef"] = run(tuned)
    ingest(
        str(robotics_docs()),
        settings=base,
        embedder=embedder,
        options=IngestOptions(chunk_size=32, chunk_overlap=0),
    )
    runs["chunks"] = run(tuned)
    (root / "v2").mkdir()
    labels = changed_labels(bench, root / "v2" / bench.name)  # same name: only labels differ
    runs["labels"] = run(tuned, labels)
    return Story(home, history, bench, labels, runs, embedder)
