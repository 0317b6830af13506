"""``ragsonde compare`` in process: saved reports in, tables, JSON and the gate's exit code out."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

import ragsonde.cli.compare  # registers the command on the app
import ragsonde.cli.eval  # a second command keeps the app a group (`app compare …`)
from ragsonde.cli.app import app
from tests.evaluate.reports import IDS, N, known_arrays, report_json


@pytest.fixture
def arrays() -> tuple[np.ndarray, np.ndarray]:
    return known_arrays()


def _write(tmp_path: Path, a: np.ndarray, b: np.ndarray) -> tuple[str, str]:
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(report_json({"ndcg@10": a, "recall@10": a})), encoding="utf-8")
    pb.write_text(json.dumps(report_json({"ndcg@10": b, "recall@10": a}, name="B")), "utf-8")
    return str(pa), str(pb)


def _shifted(arrays: tuple[np.ndarray, np.ndarray], shift: float) -> tuple[np.ndarray, ...]:
    a, _ = arrays
    noise = np.random.default_rng(7).normal(0, 0.05, N)
    return a, np.round(a + shift + noise, 6)


def test_cli_gate_fails_on_a_clearly_worse_b(
    tmp_path: Path, arrays: tuple[np.ndarray, np.ndarray]
) -> None:
    pa, pb = _write(tmp_path, *_shifted(arrays, -0.15))
    out = CliRunner().invoke(app, ["compare", pa, pb, "--gate-no-regression"])
    assert out.exit_code == 1, out.output
    assert "worse" in out.stdout and "significant regression" in out.stderr
    assert "queries that changed most" in out.stdout


def test_cli_gate_passes_on_a_better_b(
    tmp_path: Path, arrays: tuple[np.ndarray, np.ndarray]
) -> None:
    pa, pb = _write(tmp_path, *_shifted(arrays, 0.15))
    out = CliRunner().invoke(app, ["compare", pa, pb, "--gate-no-regression", "-m", "ndcg@10"])
    assert out.exit_code == 0, out.output
    assert "better" in out.stdout and "PASS" in out.stdout


def test_cli_gate_watches_only_named_metrics(
    tmp_path: Path, arrays: tuple[np.ndarray, np.ndarray]
) -> None:
    pa, pb = _write(tmp_path, *_shifted(arrays, -0.15))
    out = CliRunner().invoke(app, ["compare", pa, pb, "--gate-no-regression", "-m", "recall@10"])
    assert out.exit_code == 0, out.output


def test_cli_json_parses(tmp_path: Path, arrays: tuple[np.ndarray, np.ndarray]) -> None:
    pa, pb = _write(tmp_path, *arrays)
    out = CliRunner().invoke(app, ["compare", pa, pb, "--json", "--gate-no-regression"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert [m["metric"] for m in doc["metrics"]] == ["ndcg@10", "recall@10"]
    ndcg = doc["metrics"][0]
    a, b = arrays
    assert ndcg["p_ttest"] == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-12)
    assert doc["gate"] == {"metrics": ["ndcg@10"], "regressions": [], "passed": True}
    assert len(doc["most_changed"]["queries"]) == 10


def test_cli_mismatch_is_a_clean_validation_error(tmp_path: Path) -> None:
    v = np.full(N, 0.5)
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(report_json({"ndcg@10": v})), encoding="utf-8")
    pb.write_text(json.dumps(report_json({"ndcg@10": v}, IDS[:40])), encoding="utf-8")
    out = CliRunner().invoke(app, ["compare", str(pa), str(pb), "--json"])
    assert out.exit_code == 2, out.output
    err = json.loads(out.stdout)["error"]
    assert err["code"] == "VALIDATION_ERROR" and "10 only in A" in err["message"]
    missing = CliRunner().invoke(app, ["compare", str(pa), str(tmp_path / "nope.json")])
    assert missing.exit_code == 2 and "cannot read report" in missing.stderr


def test_command_is_registered_with_help() -> None:
    assert ragsonde.cli.compare.compare_command.__doc__
    out = CliRunner().invoke(app, ["compare", "--help"])
    assert out.exit_code == 0 and "--gate-no-regression" in out.stdout


def test_saved_reports_go_through_the_model_and_their_version_is_checked(
    tmp_path: Path, arrays: tuple[np.ndarray, np.ndarray]
) -> None:
    a, b = arrays
    pa, pb = _write(tmp_path, a, b)  # no schema_version: read as 1.0
    assert CliRunner().invoke(app, ["compare", pa, pb]).exit_code == 0
    newer_minor = report_json({"ndcg@10": b, "recall@10": a}) | {
        "schema_version": "1.7",
        "a_field_from_the_future": {"x": 1},
    }
    Path(pb).write_text(json.dumps(newer_minor), encoding="utf-8")
    assert CliRunner().invoke(app, ["compare", pa, pb]).exit_code == 0
    Path(pb).write_text(json.dumps(newer_minor | {"schema_version": "2.0"}), encoding="utf-8")
    out = CliRunner().invoke(app, ["compare", pa, pb, "--json"])
    assert out.exit_code == 2, out.output
    err = json.loads(out.stdout)["error"]
    assert err["code"] == "VALIDATION_ERROR"
    assert "schema version 2.0" in err["message"] and pb in err["message"]
    broken = report_json({"ndcg@10": a})
    broken["per_query"]["q00"]["metrics"] = "high"
    Path(pb).write_text(json.dumps(broken), encoding="utf-8")
    out = CliRunner().invoke(app, ["compare", pa, pb])
    assert out.exit_code == 2 and "per_query.q00.metrics" in out.stderr


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (None, "it is a folder, not a file"),
        (b"", "it is empty"),
        (b"\xff\xfe{}", "it is UTF-16 text (it opens with a UTF-16 byte order mark)"),
        (b'{"metric": "caf\xe9"}', "line 1 is not UTF-8 text (invalid continuation byte"),
        (b'{"kind": "comparison-plan", "metric": "ndcg\\udc80"}', "lone surrogate"),
        (b'{"query": "a"}\n{"query": "b"}\n', "it is not JSON (Extra data at line 2"),
        (b"[1, 2]", "is not a judging plan"),
        (b'{"kind": "judging-plan", "metric": 3}', "metric: Input should be a valid string"),
    ],
    ids=["folder", "empty", "utf16", "not-utf8", "surrogate", "jsonl", "list", "bad-field"],
)
def test_a_plan_file_that_is_no_plan_is_one_clear_error(
    tmp_path: Path, arrays: tuple[np.ndarray, np.ndarray], content: bytes | None, reason: str
) -> None:
    """Each used to surface Python's own words: a pydantic dump with its URL, ``Expecting
    value: line 1 column 1 (char 0)`` for an empty or binary file, ``[Errno 21]``."""
    pa, pb = _write(tmp_path, *arrays)
    plan = tmp_path / "plan.json"
    if content is None:
        plan.mkdir()
    else:
        plan.write_bytes(content)
    for command in (["compare", pa, pb], ["compare", pa, pb, "--json"]):
        out = CliRunner().invoke(app, [*command, "--plan-file", str(plan)])
        assert out.exit_code == 2, out.output
        text = " ".join((out.stdout + out.stderr).split())
        assert "VALIDATION_ERROR" in text and reason in text, text
        assert "pydantic" not in text and "Errno" not in text and "Traceback" not in text


@pytest.mark.parametrize("predictor", ["consensus", "traffic"])
def test_a_predictor_that_replays_is_refused_by_compare(
    tmp_path: Path, arrays: tuple[np.ndarray, np.ndarray], predictor: str
) -> None:
    """Saved reports carry no workspace to replay their queries in: ``consensus`` ended in an
    AttributeError traceback."""
    pa, pb = _write(tmp_path, *arrays)
    out = CliRunner().invoke(app, ["compare", pa, pb, "--predictor", predictor])
    assert out.exit_code == 2, out.output
    assert out.exception is None or isinstance(out.exception, SystemExit), out.exception
    text = " ".join(out.stderr.split())
    assert text.startswith(f"VALIDATION_ERROR: predictor '{predictor}' replays one collection")
