"""The planted corpus and its benchmark: each query meets one fault (fixtures: conftest.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragsonde.config import Settings
from tests.support import DOCS, LIDAR


@dataclass(frozen=True)
class Planted:
    """The ``planted`` collection's settings and its benchmark file."""

    settings: Settings
    bench: Path


@dataclass(frozen=True)
class Indexes:
    """The ``binary`` and ``weak_hnsw`` collections' settings and their BEIR slice."""

    settings: Settings
    bench: Path


#: A text far longer than the model's 256-token window, whose answer comes after it.
FILLER = " ".join(
    ["Bake the bread at two hundred degrees and let the dough rest overnight in a cool pantry."]
    * 30
)
ANSWER = "The capybara reactor vents xenon gas through its seventh brass valve."
REACTOR = "which reactor vents xenon through a brass valve"
TUNE = "how do I tune the gains of a PID controller"
#: Filler points of ``weak_hnsw``: enough for its vectors to pass the 10 MB full-scan threshold.
FILLERS = 8000
#: How many chunks the crowding document has (all of them closer to TUNE than the PID page).
CROWD = 30


def planted_rows() -> list[tuple[str, str, str]]:
    """(doc_id, section, text) per chunk: the support corpus plus the planted documents."""
    rows = list(DOCS)
    rows.append(("blank", "Misc", ""))
    rows.append(("long", "Misc", f"{FILLER} {ANSWER}"))
    rows += [
        (
            "tuning",
            "Control > Tuning",
            f"How to tune a PID controller's gains, step {i}: raise the proportional gain "
            "until it oscillates.",
        )
        for i in range(CROWD)
    ]
    return rows


PLANTED_QUERIES: list[dict[str, Any]] = [
    {"query_id": "ghost", "query": LIDAR, "relevant": ["lidar", "ghost"]},
    {"query_id": "blank", "query": LIDAR, "relevant": ["blank"]},
    {
        "query_id": "filtered",
        "query": LIDAR,
        "relevant": ["lidar"],
        "filters": {"section": "Control > PID"},
    },
    {"query_id": "threshold", "query": LIDAR, "relevant": ["lidar"]},
    {"query_id": "truncated", "query": REACTOR, "relevant": ["long"]},
    {"query_id": "crowded", "query": TUNE, "relevant": ["pid"]},
    {"query_id": "near", "query": LIDAR, "relevant": ["sonar"]},
    # its own top_k of 1: an evaluation ranks one document, the ladder searches as for k
    {"query_id": "short", "query": LIDAR, "relevant": ["sonar"], "top_k": 1},
]
