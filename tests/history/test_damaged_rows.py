"""A recorded row that cannot be read back (its JSON cut short, or of another shape) is the
damaged-history error naming the file, on every command that reads it, never a traceback; the
file is left as it was. SQLite's own checks pass such a file: the damage is in the text a row
holds, which only reading it finds.

Oracle: the story's history, whose runs every command reads before the damage is planted."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # the story runs the model

#: Column -> what a stray edit leaves in it (a cut JSON, a list where an object was).
DAMAGE = {
    "fingerprint": "UPDATE runs SET fingerprint = substr(fingerprint, 1, 40) WHERE id = ?",
    "report": "UPDATE runs SET report = '[1, 2]' WHERE id = ?",
    "query row": "UPDATE queries SET row = substr(row, 1, 10) WHERE run_id = ?",
}


@pytest.mark.parametrize("column", sorted(DAMAGE))
def test_a_damaged_row_is_named_never_a_traceback(story, cli, tmp_path: Path, column: str):
    path = tmp_path / "history.sqlite"
    shutil.copy(story.history, path)
    run_id = max(story.runs.values())
    h = ["--history", str(path)]
    for args in (("show", str(run_id)), ("diff", str(run_id - 1), str(run_id)), ("list",)):
        assert cli("history", *args, *h).exit_code == 0, args  # sound before the damage
    with sqlite3.connect(path) as db:
        changed = db.execute(DAMAGE[column], (run_id,)).rowcount
    assert changed >= 1
    before = path.read_bytes()
    out = tmp_path / "t.svg"
    commands = [("show", str(run_id)), ("diff", str(run_id - 1), str(run_id)),
                ("trend", "ndcg@10", "--out", str(out))]  # fmt: skip
    refused = 0
    for args in commands:
        r = cli("history", *args, *h)
        assert "Traceback" not in r.output, (args, r.output)
        if r.exit_code == 0:
            continue  # this command does not read the damaged column
        refused += 1
        assert r.exit_code == 2, (args, r.output)
        message = " ".join(r.stderr.split())
        assert r.stderr.startswith("VALIDATION_ERROR") and str(path) in message, message
        assert "damaged" in message and "Move it aside" in message, message
    assert refused >= 1
    assert path.read_bytes() == before
