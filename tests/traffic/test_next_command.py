"""The ``next:`` command a traffic report suggests is pasted into a shell: every argument is
quoted, so a logged query (anybody's text) is one argument and runs nothing. Checked by running
the line in a real bash, with ``ragsonde`` a function that prints the arguments it got."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ragsonde.traffic.html import explain_command
from ragsonde.traffic.report import QueryHealth, TrafficReport

HOSTILE = "zzqx $(touch {mark}) `touch {mark}` \" ; touch {mark} ' \\ & | > <"


def _argv(line: str, tmp_path: Path) -> list[str]:
    script = 'ragsonde() { printf "%s\\0" "$@"; }\n' + line
    out = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, capture_output=True, check=True
    ).stdout
    return out.decode().split("\0")[:-1]


@pytest.mark.parametrize("saved", [None, "my saved; touch {mark}.jsonl"])
def test_a_hostile_query_or_id_is_one_argument_and_runs_nothing(
    tmp_path: Path, saved: str | None
) -> None:
    mark = tmp_path / "PWNED"
    text = HOSTILE.format(mark=mark)
    qid = f"a;touch {mark}"
    report = TrafficReport.model_construct(
        collection="my docs",
        saved_benchmark=None if saved is None else str(tmp_path / saved.format(mark=mark)),
    )
    q = QueryHealth.model_construct(query=text, query_id=qid)
    line = explain_command(report, q)
    if saved is None:
        assert _argv(line, tmp_path) == ["query", text, "-c", "my docs"]
    else:
        first, _, second = line.partition(" && ")
        path = Path(report.saved_benchmark or "")
        assert _argv(first, tmp_path)[:4] == ["judge", str(path), "-c", "my docs"]
        judged = path.with_name(f"{path.stem}.judged.jsonl")
        assert _argv(second, tmp_path) == ["explain", str(judged), "-q", qid, "-c", "my docs"]
    assert not mark.exists()
