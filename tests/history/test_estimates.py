"""The interval of an estimated run (``eval --estimate``) kept in the history: a schema-1 file
made by the code before the ``run_estimates`` table migrates with every run kept and its
intervals copied out of the recorded reports; ``list``/``show``/``trend`` carry them.

``data/history-schema1.sqlite`` was written by ragsonde at schema 1 (commit 696a1a4): run 1 is
the sample benchmark fully labelled, run 2 the sample benchmark with the labels of all but 20
rows removed, evaluated with ``--estimate`` (its report holds ``metrics_ci``).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ragsonde.evaluate.schema import get_schema
from ragsonde.history import HistoryStore, trend
from ragsonde.history.damage import APPLICATION_ID
from ragsonde.history.schema import MIGRATIONS
from ragsonde.history.trend import svg
from tests.support import Cli

SCHEMA1 = Path(__file__).with_name("data") / "history-schema1.sqlite"
_TABLES = ("runs", "run_metrics", "queries", "query_metrics", "file_hashes")


def _raw(path: Path) -> dict[str, Any]:
    """Every row of the schema-1 tables, read with plain sqlite3 (not the code under test)."""
    with sqlite3.connect(path) as db:
        out: dict[str, Any] = {t: sorted(db.execute(f"SELECT * FROM {t}")) for t in _TABLES}
        out["version"] = db.execute("SELECT version FROM schema_version").fetchone()[0]
    return out


def _migrated(tmp_path: Path) -> Path:
    path = tmp_path / "history.sqlite"
    shutil.copy(SCHEMA1, path)
    return path


def test_a_schema1_file_migrates_with_every_run_and_its_intervals(tmp_path: Path) -> None:
    path = _migrated(tmp_path)
    before = _raw(path)
    assert before["version"] == 1 and len(before["runs"]) == 2
    recorded = json.loads(before["runs"][1][11])["metrics_ci"]  # run 2's report JSON
    with HistoryStore(path) as hs:
        assert hs.schema_version() == len(MIGRATIONS) == 2
        runs = hs.runs()
        full, estimated = hs.get(1).report, hs.get(2).report
    after = _raw(path)
    assert {t: after[t] for t in _TABLES} == {t: before[t] for t in _TABLES}  # nothing lost
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
        rows = db.execute("SELECT metric, estimate, low, high, n_labeled, method "
                          "FROM run_estimates WHERE run_id = 2").fetchall()  # fmt: skip
    assert {m: (e, lo, hi, n, how) for m, e, lo, hi, n, how in rows} == {
        m: (v["estimate"], v["low"], v["high"], v["n_labeled"], v["method"])
        for m, v in recorded.items()
    }
    assert runs[0].metrics_ci is None and full.metrics_ci is None
    assert runs[1].metrics_ci is not None and estimated.metrics_ci is not None
    assert {m: e.model_dump(mode="json") for m, e in runs[1].metrics_ci.items()} == recorded
    assert runs[1].metrics_ci == estimated.metrics_ci
    assert runs[1].metrics_ci["ndcg@10"].n_labeled == 20


def test_a_new_run_records_its_interval_and_the_trend_draws_it(tmp_path: Path) -> None:
    path = _migrated(tmp_path)
    with HistoryStore(path) as hs:
        again = hs.get(2)
        run_id = hs.record(again.report, again.fingerprint, hs.bands(2))
        new = hs.summary(run_id)
        t = trend(hs, "ndcg@10")
    assert new.metrics_ci == again.report.metrics_ci
    interval = {p.run_id: p.interval for p in t.points}
    assert interval[1] is None and interval[2] == interval[run_id] == new.metrics_ci["ndcg@10"]  # type: ignore[index]
    drawn = svg(t)
    assert drawn.count('class="interval"') == 2 and drawn.count('class="estimate-band"') == 1
    e = interval[2]
    assert e is not None and f"[{e.low:.4f}, {e.high:.4f}] (cross-ppi++, 20 labelled" in drawn


def test_list_show_and_trend_carry_the_interval(cli: Cli, tmp_path: Path) -> None:
    h = ("--history", str(_migrated(tmp_path)))

    def doc(schema: str, *args: str) -> Any:
        r = cli("history", *args, *h, "--json")
        assert r.exit_code == 0, r.output
        out = json.loads(r.stdout)
        jsonschema.Draft202012Validator(get_schema(schema)).validate(out)
        return out

    listed = doc("history-list", "list")["runs"]
    assert listed[0]["metrics_ci"] is None
    e = listed[1]["metrics_ci"]["ndcg@10"]
    assert {"estimate", "low", "high", "n_labeled", "n_predicted", "method"} <= set(e)
    assert doc("history-show", "show", "2")["run"]["metrics_ci"]["ndcg@10"] == e
    points = doc("history-trend", "trend", "ndcg@10", "--out", str(tmp_path / "t.svg"))["points"]
    assert [p["interval"] for p in points] == [None, e]
    shown = cli("history", "trend", "ndcg@10", *h, "--out", str(tmp_path / "t.svg")).stdout
    assert f"run 2: {points[1]['value']:.4f}  estimate {e['estimate']:.4f} " in shown
    assert f"[{e['low']:.4f}, {e['high']:.4f}] ({e['method']}, 20 labelled + 26 predicted)" in shown
    table = cli("history", "show", "2", *h).stdout
    assert "estimate, 95 % interval" in table and f"[{e['low']:.4f}, {e['high']:.4f}]" in table


def test_an_estimated_runs_bootstrap_band_is_over_its_labelled_queries(tmp_path: Path) -> None:
    """The unlabelled rows carry no metric: the band resamples the labelled ones (checked
    against a bootstrap written out here), not a point at the mean."""
    import numpy as np

    from ragsonde.history.record import confidence_bands

    with HistoryStore(_migrated(tmp_path)) as hs:
        report = hs.get(2).report
    labelled = [r.metrics["ndcg@10"] for r in report.per_query.values() if r.metrics]
    assert len(labelled) == 20 < len(report.per_query)
    low, high = confidence_bands(report)["ndcg@10"]
    values = np.asarray(labelled)
    idx = np.random.default_rng(0).integers(0, len(values), size=(1000, len(values)))
    want = np.percentile(values[idx].mean(axis=1), [2.5, 97.5])
    assert (low, high) == pytest.approx(tuple(np.round(want, 6)), abs=1e-6)
    assert low < report.metrics["ndcg@10"] < high
