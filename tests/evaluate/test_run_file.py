"""``EvalReport.write_run`` from the library: never over what the evaluation read or recorded
into (the CLI's ``--run-out`` was checked; the library's call wrote over anything)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.errors import QueryValidationError
from ragsonde.evaluate import EvalOptions
from ragsonde.samples import robotics_benchmark
from tests.support import evaluate_in


@pytest.mark.slow
def test_a_run_file_over_the_benchmark_or_the_history_is_refused_and_leaves_it_whole(
    sample_home: Path, embedder, tmp_path: Path
) -> None:
    bench = tmp_path / "bench.jsonl"
    rows = robotics_benchmark().read_text(encoding="utf-8").splitlines(keepends=True)[:6]
    bench.write_text("".join(rows), encoding="utf-8")
    history = tmp_path / "history.sqlite"
    report = evaluate_in(
        bench,
        EvalOptions(throughput=False),
        settings=Settings(home=sample_home, collection="robotics"),
        embedder=embedder,
        record=True,
        history=history,
    )
    assert report.history_run is not None and history.is_file()
    link = tmp_path / "link.jsonl"  # the benchmark through a symlink is the benchmark
    link.symlink_to(bench)
    for target, why in [
        (bench, "is an input of this command"),
        (link, "is an input of this command"),
        (history, "is the history file"),
    ]:
        before = target.read_bytes()
        with pytest.raises(QueryValidationError, match=why) as e:
            report.write_run(target)
        assert e.value.code == "VALIDATION_ERROR" and e.value.field == "path"
        assert target.read_bytes() == before, target
    run_file = tmp_path / "run.trec"  # anywhere else it is written, one line per hit
    report.write_run(run_file)
    lines = run_file.read_text(encoding="utf-8").splitlines()
    assert len(lines) == sum(len(docs) for docs in report.run.values()) > 0
    assert {line.split()[0] for line in lines} == set(report.per_query)
