"""``ragsonde eval --json`` validates against the published report schema, for every kind of
report; the published file is what the models generate; ``ragsonde schema`` prints it.

The versus kind is checked in ``tests/evaluate/test_versus.py`` (it needs the fake remote API).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

import ragsonde.cli.eval
import ragsonde.cli.schema  # noqa: F401
from ragsonde.cli.app import app
from ragsonde.evaluate import EvalReport
from ragsonde.evaluate.report import SCHEMA_VERSION
from ragsonde.evaluate.schema import SCHEMA_FILE, get_schema, schema_text
from ragsonde.samples import robotics_benchmark


def test_the_published_file_is_what_the_models_generate() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text("report"), (
        "report.schema.json is stale: run `python -m ragsonde.evaluate.schema`"
    )


def test_schema_command_prints_the_file_and_names_unknown_schemas() -> None:
    out = CliRunner().invoke(app, ["schema", "report"])
    assert out.exit_code == 0 and out.stdout == SCHEMA_FILE.read_text(encoding="utf-8")
    comparison = CliRunner().invoke(app, ["schema", "comparison"])
    assert json.loads(comparison.stdout)["properties"]["metrics"]["type"] == "array"
    bad = CliRunner().invoke(app, ["schema", "nope"])
    assert bad.exit_code == 2 and "report, comparison" in bad.stderr
    # every name the command prints is in the list it gives (traffic was left out of it)
    message = " ".join(bad.stderr.split())
    listed = message.split("there are: ")[1].rstrip(".").split(", ")
    assert "traffic" in listed and "history-list" in listed, message
    for name in listed:
        assert CliRunner().invoke(app, ["schema", name]).exit_code == 0, name


def test_the_schema_rejects_what_is_not_a_report() -> None:
    schema = get_schema("report")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"dataset": "x", "metrics": {"ndcg@10": "high"}}, schema)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "flags", "part"),
    [
        ("plain", [], None),
        ("by", ["--by", "section:1"], "breakdown"),
        ("sweep", ["--sweep-thresholds"], "threshold_sweep"),
        ("ann-vs-exact", ["--ann-vs-exact"], "index_health"),
        ("explain", ["--explain", "--explain-k", "5"], "misses"),
    ],
)
def test_eval_json_validates_against_the_schema(
    sample_home: Path,
    validate_report: Callable[[dict[str, Any]], None],
    tmp_path: Path,
    kind: str,
    flags: list[str],
    part: str | None,
) -> None:
    saved = tmp_path / f"{kind}.json"
    args = ["eval", str(robotics_benchmark()), "-c", "robotics", "--home", str(sample_home)]
    out = CliRunner().invoke(app, [*args, "--k", "1,5,10", *flags, "--json", "--save", str(saved)])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    validate_report(doc)
    assert doc["schema_version"] == SCHEMA_VERSION and doc["kind"] == "eval"
    assert json.loads(saved.read_text(encoding="utf-8")) == doc
    if part is not None:
        assert doc[part] is not None
    # what the schema accepts, the model reads back unchanged
    assert EvalReport.model_validate(doc).model_dump(mode="json") == doc
