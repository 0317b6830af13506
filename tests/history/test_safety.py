"""The history file is never lost or clobbered: concurrent writers all land, and a damaged file
gets a clear error naming it and what to do, and is left byte for byte as it was."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.history import HistoryFileError, HistoryStore
from ragsonde.workspace import Workspace
from tests.history.support import Story
from tests.support import ROOT, home_env

pytestmark = pytest.mark.slow  # processes and the model

_WRITER = """
import sys
from ragsonde.history import HistoryFileError, HistoryStore
from ragsonde.history.baseline import load_exported
run = load_exported(__import__("pathlib").Path(sys.argv[2]))
for _ in range(int(sys.argv[3])):
    with HistoryStore(sys.argv[1]) as hs:
        hs.record(run.report, run.fingerprint, {})
"""


def _export(story, tmp_path: Path) -> Path:
    out = tmp_path / "runs.jsonl"
    with HistoryStore(story.history) as hs, out.open("w", encoding="utf-8") as fh:
        hs.export(fh, [story.runs["baseline"]])
    return out


def test_four_processes_recording_at_once_lose_nothing(story, tmp_path: Path):
    exported = _export(story, tmp_path)
    target = tmp_path / "shared.sqlite"
    env = home_env(tmp_path)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(target), str(exported), "10"],
            env=env,
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    with HistoryStore(target) as hs:
        runs = hs.runs()
        assert len(runs) == 40 and len({r.run_id for r in runs}) == 40
        whole = hs.get(runs[-1].run_id)  # every run whole: its queries and their metrics
        assert whole.report.n_queries == runs[-1].n_queries > 0
        assert all(row.metrics for row in whole.report.per_query.values())


def test_two_evals_at_once_record_both_runs(story, tmp_path: Path):
    """Two real ``ragsonde eval`` processes (each on its copy of the collection) into one file."""
    history = tmp_path / "both.sqlite"
    procs = []
    for name in ("a", "b"):
        home = tmp_path / name
        shutil.copytree(story.home, home)
        env = {**home_env(home), "RAGSONDE_HISTORY": str(history)}
        args = ["eval", str(story.bench), "-c", "robotics", "--no-throughput", "--json"]
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "ragsonde", *args],
                env=env,
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    with HistoryStore(history) as hs:
        runs = hs.runs()
    assert len(runs) == 2
    assert {json.loads(o)["created_at"] for o, _ in outs} == {r.created_at for r in runs}


def _damaged(story, tmp_path: Path, how: str) -> Path:
    path = tmp_path / f"{how}.sqlite"
    shutil.copy(story.history, path)
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2 + 100])
    else:  # every page after the first overwritten: what a bad disk or a stray write leaves
        path.write_bytes(data[:4096] + bytes((i * 7 + 3) % 256 for i in range(len(data) - 4096)))
    return path


@pytest.mark.parametrize("how", ["truncated", "corrupted"])
def test_a_damaged_history_is_named_and_left_untouched(story, cli, tmp_path: Path, how: str):
    from ragsonde.evaluate import EvalOptions, evaluate

    path = _damaged(story, tmp_path, how)
    before = path.read_bytes()
    r = cli("history", "list", "--history", str(path))
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith("VALIDATION_ERROR") and "Traceback" not in r.output
    message = " ".join(r.stderr.split())
    assert str(path) in message and "Move it aside" in message and "--no-record" in message
    few = tmp_path / "few.jsonl"  # the recording is what fails: three queries are enough
    few.write_text("".join(story.bench.read_text("utf-8").splitlines(True)[:3]), "utf-8")
    with _workspace(story) as ws, pytest.raises(HistoryFileError, match="aside") as err:
        evaluate(few, options=EvalOptions(throughput=False), history=path, workspace=ws)
    assert err.value.path == path
    assert path.read_bytes() == before
    assert not path.with_name(path.name + "-wal").exists()


def _workspace(story: Story) -> Workspace:
    return Workspace(Settings(home=story.home, collection="robotics"), embedder=story.embedder)


def test_a_file_that_is_not_a_database_is_refused(tmp_path: Path):
    path = tmp_path / "history.sqlite"
    path.write_text("not a database at all, but long enough to have a header " * 4)
    before = path.read_bytes()
    with pytest.raises(HistoryFileError, match="not an SQLite database"):
        HistoryStore(path)
    assert path.read_bytes() == before
