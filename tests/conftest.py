"""Shared fixtures: the real model, real stores (embedded Edge and qdrant-client local mode)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ragsonde.config import Settings
from ragsonde.embedders.local import LocalEmbedder

#: The shared benchmark data, read in place: ``RAGSONDE_DATA`` or ``../shared/data`` beside the
#: checkout. Tests that need it skip, saying where they looked, when it is absent.
SCIFACT = (
    Path(os.environ.get("RAGSONDE_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
    / "scifact"
)

#: A tiny corpus with clear right and wrong answers, for retrieval tests.
DOCS = [
    (
        "lidar",
        "Sensors > Lidar",
        "Lidar measures distance by timing laser pulses reflected off surfaces.",
    ),
    (
        "sonar",
        "Sensors > Ultrasonic",
        "Ultrasonic rangefinders emit sound pulses and listen for the echo.",
    ),
    (
        "imu",
        "Sensors > IMU",
        "An IMU combines accelerometers and gyroscopes; gyroscope bias makes heading drift.",
    ),
    (
        "pid",
        "Control > PID",
        "A PID controller sums proportional, integral and derivative terms of the error.",
    ),
    (
        "lipo",
        "Power > Batteries",
        "Never discharge a LiPo cell below 3.0 volts; it can swell or catch fire.",
    ),
    (
        "astar",
        "Planning > A*",
        "A* search expands nodes by cost so far plus an admissible heuristic to the goal.",
    ),
    (
        "slam",
        "Mapping > SLAM",
        "SLAM builds a map of an unknown place while tracking the robot's pose in it.",
    ),
    (
        "gps",
        "Sensors > GPS",
        "RTK GPS corrects satellite positions with a base station to reach centimetres.",
    ),
]


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
