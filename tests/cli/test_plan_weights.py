"""``judge --plan`` reads each row's traffic ``weight``: a row is weighted whether or not it
names its ``query_id`` (the benchmark's reader numbers a row without one), and a weight that is
not a positive number is refused naming its line, never read as weight 1 without a word. And
``eval --estimate --plan-file`` refuses a plan that does not know the benchmark's queries (each
was read as p = 1: the plan weighed nothing).

Oracle: the same rows with and without their ids must give the same plan, row for row (the
ids only name the queries); and a plan with the weights differs from one without them, so the
weights are read at all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.estimate.plan import JudgingPlan
from ragsonde.samples import robotics_benchmark
from tests.support import Cli, robotics_hybrid

pytestmark = pytest.mark.slow
START = 12


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxEmbedder) -> Path:
    return robotics_hybrid(tmp_path_factory.mktemp("plan_weights"), embedder)


def _rows() -> list[dict]:
    rows = [json.loads(line) for line in robotics_benchmark().read_text().splitlines() if line]
    for i, row in enumerate(rows):
        if i >= START:
            del row["relevant"]
        row["weight"] = 60 if i % 3 == 0 else 1  # a third of the traffic, sixty times as often
    return rows


def _plan(cli: Cli, home: Path, tmp_path: Path, rows: list[dict], name: str):
    bench = tmp_path / f"{name}.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / f"{name}.plan.json"
    done = cli("judge", str(bench), "-c", "robotics", "--home", str(home), "--plan", "4",
               "-o", str(out))  # fmt: skip
    return done, out


def _by_row(plan: JudgingPlan, ids: list[str]) -> list[float]:
    return [plan.probabilities[q] for q in ids]


def test_rows_without_ids_are_weighted_as_rows_with_them(cli: Cli, home: Path, tmp_path: Path):
    rows = _rows()
    named, named_out = _plan(cli, home, tmp_path, rows, "named")
    assert named.exit_code == 0, named.output
    anonymous = [{k: v for k, v in r.items() if k != "query_id"} for r in rows]
    plain, plain_out = _plan(cli, home, tmp_path, anonymous, "anonymous")
    assert plain.exit_code == 0, plain.output
    unweighted = [{k: v for k, v in r.items() if k != "weight"} for r in rows]
    flat, flat_out = _plan(cli, home, tmp_path, unweighted, "flat")
    assert flat.exit_code == 0, flat.output
    ids = [r["query_id"] for r in rows]
    numbers = [str(n) for n in range(1, len(rows) + 1)]
    with_ids = _by_row(JudgingPlan.model_validate_json(named_out.read_text()), ids)
    without = _by_row(JudgingPlan.model_validate_json(plain_out.read_text()), numbers)
    no_weights = _by_row(JudgingPlan.model_validate_json(flat_out.read_text()), ids)
    assert with_ids != pytest.approx(no_weights)  # the weights change the plan
    assert without == pytest.approx(with_ids)  # and reach it with or without the ids


def test_a_carriage_return_inside_a_row_is_read_as_the_benchmark_reader_reads_it(
    cli: Cli, home: Path, tmp_path: Path
):
    """The weights were read with ``read_text()``, which also ends a line at a lone "\\r": JSON
    whitespace inside a row, which the benchmark's reader reads as one row. The half row it
    made ended ``judge --plan`` in a JSONDecodeError traceback."""
    rows = _rows()
    plain, plain_out = _plan(cli, home, tmp_path, rows, "plain")
    assert plain.exit_code == 0, plain.output
    bench = tmp_path / "cr.jsonl"
    bench.write_bytes(b"".join(json.dumps(r).replace(', "weight"', ',\r "weight"').encode() + b"\n"
                               for r in rows))  # fmt: skip
    out = tmp_path / "cr.plan.json"
    done = cli("judge", str(bench), "-c", "robotics", "--home", str(home), "--plan", "4",
               "-o", str(out))  # fmt: skip
    assert done.exit_code == 0, done.output
    ids = [r["query_id"] for r in rows]
    assert _by_row(JudgingPlan.model_validate_json(out.read_text()), ids) == pytest.approx(
        _by_row(JudgingPlan.model_validate_json(plain_out.read_text()), ids)
    )


@pytest.mark.parametrize("weight", ["3", -2, 0, True, None, 1e400])
def test_a_weight_that_is_no_positive_number_is_refused_naming_its_line(
    cli: Cli, home: Path, tmp_path: Path, weight: object
):
    rows = _rows()
    rows[START + 1]["weight"] = weight
    done, out = _plan(cli, home, tmp_path, rows, "bad")
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith("VALIDATION_ERROR"), done.stderr
    message = " ".join(done.stderr.split())
    assert f"line {START + 2}: weight" in message and "bad.jsonl" in message
    assert not out.exists()


def test_an_estimate_refuses_a_plan_made_for_other_queries(cli: Cli, home: Path, tmp_path: Path):
    rows = _rows()
    done, plan = _plan(cli, home, tmp_path, rows[:30], "fewer")  # planned on 30 of the rows
    assert done.exit_code == 0, done.output
    bench = tmp_path / "all.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    common = ["-c", "robotics", "--home", str(home), "--estimate", "--no-throughput",
              "--no-record", "--json"]  # fmt: skip
    own = cli("eval", str(tmp_path / "fewer.jsonl"), *common, "--plan-file", str(plan))
    assert own.exit_code == 0, own.output  # the plan's own benchmark: read
    other = cli("eval", str(bench), *common, "--plan-file", str(plan))
    assert other.exit_code == 2, other.output
    message = " ".join(other.output.split())
    assert "VALIDATION_ERROR" in message, message
    assert f"{len(rows) - 30} of the {len(rows)} queries" in message and plan.name in message
    edited = json.loads(plan.read_text())
    first = next(iter(edited["probabilities"]))
    for p in (0.0, -0.5, float("nan")):
        edited["probabilities"][first] = p
        plan.write_text(json.dumps(edited))
        bad = cli("eval", str(tmp_path / "fewer.jsonl"), *common, "--plan-file", str(plan))
        assert bad.exit_code == 2, bad.output
        assert "is not in (0, 1]" in " ".join(bad.output.split()), bad.output
