"""An ICT benchmark evaluated where its questions were not removed is said: on the original
collection, or on a copy rebuilt since for other questions, each question finds its own sentence
(nDCG@10 0.97 against 0.75 on the sample docs) and the report warned of nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.evaluate import evaluate
from ragsonde.evaluate.ict_match import ICT_GENERATOR
from ragsonde.ingest import ingest
from ragsonde.labels import GenerateOptions, generate
from ragsonde.labels.ict import ICT_METHOD
from ragsonde.labels.offline import generator_name
from ragsonde.samples import robotics_docs
from ragsonde.workspace import Workspace

pytestmark = pytest.mark.slow  # the real model, real generation and evaluation

SAID = "ICT questions still find their own sentence here"


def _warned(report_warnings: list[str]) -> str:
    return next((w for w in report_warnings if SAID in w), "")


def test_an_ict_benchmark_off_its_copy_is_said_and_on_it_is_not(
    tmp_path: Path, embedder: object
) -> None:
    assert generator_name(ICT_METHOD) == ICT_GENERATOR
    settings = Settings(home=tmp_path / "home", collection="robotics")
    with Workspace(settings, embedder=embedder) as ws:  # type: ignore[arg-type]
        ingest(str(robotics_docs()), workspace=ws)
        first = generate(
            tmp_path / "a.jsonl",
            workspace=ws,
            options=GenerateOptions(n=12, seed=41, method="ict", ict_collection="rob-ict-41"),
        )
        on_copy = evaluate(
            tmp_path / "a.jsonl", workspace=ws, collection="rob-ict-41", record=False
        )
        on_source = evaluate(
            tmp_path / "a.jsonl", workspace=ws, collection="robotics", record=False
        )
        assert not _warned(on_copy.warnings)
        said = _warned(on_source.warnings)
        assert f"{first.written} of the {first.written} ICT questions" in said
        assert "'robotics' is not the ICT copy" in said
        assert on_source.metrics["ndcg@10"] > on_copy.metrics["ndcg@10"]  # why it matters
        generate(  # the same copy rebuilt for other questions
            tmp_path / "b.jsonl",
            workspace=ws,
            options=GenerateOptions(n=5, seed=7, method="ict", ict_collection="rob-ict-41"),
        )
        rebuilt = evaluate(
            tmp_path / "a.jsonl", workspace=ws, collection="rob-ict-41", record=False
        )
        assert "is an ICT copy of 'robotics' made for other questions" in _warned(rebuilt.warnings)
        fresh = evaluate(tmp_path / "b.jsonl", workspace=ws, collection="rob-ict-41", record=False)
        assert not _warned(fresh.warnings)
