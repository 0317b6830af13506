"""``eval`` refuses a benchmark row whose provenance labels are malformed, naming the entry,
before any search: an LLM's label with ``"source": "LLM"`` had counted as a person's (gold, and
a gate could pass on it), and a person's ``"grade": "2"`` had left gold without a word."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import Cli

HUMAN = {"id": "lidar", "grade": 2, "source": "human", "judge": "ana"}


@pytest.mark.parametrize(
    ("label", "why"),
    [
        ({**HUMAN, "source": "LLM", "judge": "gemma"}, "not 'LLM'"),
        ({**HUMAN, "grade": "2"}, "grade must be an integer 0 to 3, not '2'"),
    ],
)
@pytest.mark.parametrize("extra", [[], ["--estimate"]])
def test_eval_names_the_malformed_label(
    cli: Cli, tmp_path: Path, label: dict, why: str, extra: list[str]
) -> None:
    row = {"query_id": "q1", "query": "lidar range", "relevant": {"lidar": 2}, "labels": [label]}
    path = tmp_path / "bench.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    home = ["--home", str(tmp_path / "home"), "-c", "nowhere", "--no-record"]
    out = cli("eval", str(path), *home, *extra)
    assert out.exit_code == 2, out.output
    message = " ".join(out.stderr.split())
    assert out.stderr.startswith("VALIDATION_ERROR") and "bench.jsonl" in message, message
    assert "entry 1: labels[0]" in message and why in message, message
