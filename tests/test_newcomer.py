"""A newcomer's first hour, scripted: the demo, then the quickstart's commands on a dozen
sectioned Markdown pages of their own (:mod:`tests.sectioned`), each a real ``ragsonde``
process, as ``docs/quickstart.md`` shows them. Every step must say only true things:

- ``make demo`` (``python -m ragsonde.demo``) prints no warning;
- ``generate`` runs twice in a row (the second reuses ragsonde's own copy);
- eval on the ICT copy reports 0 integrity problems, and its HTML report no "lower bound";
- ``chunking`` reports identical configurations as one, and its grid holds fixed windows with
  overlap;
- ``collections`` lists the copy (as ragsonde's, and of what) and deletes it.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sectioned import TOPICS, write_pages
from tests.support import home_env

pytestmark = pytest.mark.slow  # processes, each loading the model

#: The quickstart, as docs/quickstart.md shows it (run from the folder that holds ``pages/``).
QUICKSTART = [
    "ragsonde ingest pages --collection lumen",
    'ragsonde query "how do I pair a second laptop?" --collection lumen',
    "ragsonde generate --collection lumen --n 30 --out bench.jsonl",
    "ragsonde generate --collection lumen --n 30 --out bench.jsonl",
    "ragsonde eval bench.jsonl --collection lumen-ict-s0 --report report.html",
    "ragsonde chunking pages --save chunking.json",
    "ragsonde collections list",
    "ragsonde collections delete lumen-ict-s0 --yes",
]


def sh(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One quickstart line as the shell would run it, ``ragsonde`` being this checkout's."""
    argv = shlex.split(line)
    assert argv[0] == "ragsonde"
    done = subprocess.run(
        [sys.executable, "-m", "ragsonde", *argv[1:]],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, f"{line}\n{done.stdout}\n{done.stderr}"
    return done


def test_the_demo_prints_no_warning(tmp_path: Path) -> None:
    env = home_env(tmp_path / "demo-home")
    done = subprocess.run(
        [sys.executable, "-m", "ragsonde.demo"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout + done.stderr
    assert "warning" not in out.lower(), out
    assert "judged@10" in out and "standard assumption" in out  # explained, not alarmed


def test_the_quickstart_on_sectioned_pages_says_only_true_things(tmp_path: Path) -> None:
    write_pages(tmp_path / "pages")
    env = home_env(tmp_path / "home")
    out = [sh(line, tmp_path, env) for line in QUICKSTART]
    ingest, query, first, second, ev, chunking, listed, deleted = out

    assert f"Ingested {len(TOPICS)} documents" in ingest.stdout
    assert "Sync" in query.stdout  # the pairing answer is on the sync page

    # generate twice: the copy is ragsonde's, reused; the command to run next is one line
    assert "(built;" in first.stdout and "(reused;" in second.stdout
    for gen in (first, second):
        assert "  ragsonde eval bench.jsonl --collection lumen-ict-s0\n" in gen.stdout
        wrote = re.search(r"wrote (\d+) queries", gen.stdout)
        assert wrote is not None
        if int(wrote.group(1)) < 30:  # fewer than asked: the reason comes with it
            assert "of the 30 queries asked:" in gen.stdout
    assert "warning" not in second.stdout.lower()

    # eval on the ICT copy: the intended edits are no integrity problem, no banner, no alarm
    assert re.search(r"integrity: \d+ results checked, 0 problems", ev.stdout), ev.stdout
    assert "warning" not in (ev.stdout + ev.stderr).lower()
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "lower bound" not in html and 'id="coverage-warning"' not in html
    assert 'id="judged-note"' in html

    # chunking: identical configurations as one row; fixed windows with overlap in the grid
    report = json.loads((tmp_path / "chunking.json").read_text(encoding="utf-8"))
    labels = [c["label"] for c in report["configurations"]]
    merged = {c["label"]: c["same_as"] for c in report["configurations"] if c["same_as"]}
    swept = set(labels) | {x for same in merged.values() for x in same}
    assert {"fixed 250/125", "fixed 400/200", "fixed 800/400"} <= swept
    assert merged and len(labels) < len(swept)  # the merged ones are one row each
    assert "identical chunks" in chunking.stderr and "(+" in chunking.stdout
    assert any("covers most of the corpus" in w for w in report["warnings"])

    # collections: the copy listed as ragsonde's copy of lumen, then deleted through the store
    assert "lumen-ict-s0" in listed.stdout and "ict copy of lumen" in listed.stdout
    assert "deleted 1: lumen-ict-s0" in deleted.stdout
    after = sh("ragsonde collections list", tmp_path, env)
    assert "lumen-ict-s0" not in after.stdout and "lumen" in after.stdout
