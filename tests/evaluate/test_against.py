"""``eval --against URL``: the embedded collection and its pushed copy, compared per query."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.evaluate import EvalOptions
from ragsonde.evaluate.against import evaluate_against
from ragsonde.samples import robotics_benchmark
from ragsonde.store import open_store
from ragsonde.store.push import open_target, push
from ragsonde.workspace import Workspace
from tests.support import run


@pytest.mark.slow
def test_a_pushed_copy_evaluates_exactly_like_the_embedded_collection(
    sample_home: Path, embedder, tmp_path: Path
):
    settings = Settings(home=sample_home, collection="robotics")
    url = f"path:{tmp_path / 'copy'}"
    source, target = open_store(settings), open_target(url)
    try:
        push(source, "robotics", target)
    finally:
        source.close()
        target.close()
    options = EvalOptions(k=[5, 10], throughput=False, exact=True)
    with Workspace(settings, embedder=embedder) as ws:
        versus = evaluate_against(robotics_benchmark(), url, options, ws)
    assert versus.a.search.backend != versus.b.search.backend  # embedded Edge vs qdrant-client
    assert versus.a.metrics["ndcg@10"] > 0.5
    assert versus.b.metrics == versus.a.metrics
    for qid, row in versus.a.per_query.items():
        theirs = versus.b.per_query[qid].retrieved
        assert [d for d, _ in theirs] == [d for d, _ in row.retrieved]
        assert [s for _, s in theirs] == pytest.approx([s for _, s in row.retrieved], abs=1e-4)
    ndcg = versus.comparison.metric("ndcg@10")
    assert ndcg.wins == ndcg.losses == 0 and ndcg.delta == 0.0
    assert versus.comparison.n_queries == versus.a.n_queries == 46


@pytest.mark.slow
def test_cli_eval_against_prints_both_reports_and_the_comparison(sample_home: Path, tmp_path: Path):
    settings = Settings(home=sample_home, collection="robotics")
    url = f"path:{tmp_path / 'copy'}"
    source, target = open_store(settings), open_target(url)
    try:
        push(source, "robotics", target)
    finally:
        source.close()
        target.close()
    env = {"RAGSONDE_HOME": str(sample_home)}
    args = ("eval", str(robotics_benchmark()), "-c", "robotics", "--no-throughput", "--exact")
    res = run(*args, "--against", url, "--json", env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["kind"] == "versus"
    assert out["a"]["metrics"] == out["b"]["metrics"]
    ndcg = next(m for m in out["comparison"]["metrics"] if m["metric"] == "ndcg@10")
    assert ndcg["wins"] == ndcg["losses"] == 0


@pytest.mark.slow
def test_a_reference_store_that_cannot_hold_the_copy_is_refused_before_the_embedded_run(
    sample_home: Path, tmp_path: Path
):
    """``--against path:X`` where X is a file said "Is the server running and QDRANT_URL
    right?"; where X did not exist, qdrant-client made an empty folder there and the error
    advised ``ragsonde ingest``; inside ragsonde's home it wrote its own files among the
    embedded store's. Each is refused, naming the reference store, before the embedded side
    runs its benchmark (nothing printed to stdout, no folder left behind)."""
    env = {"RAGSONDE_HOME": str(sample_home)}
    args = ("eval", str(robotics_benchmark()), "-c", "robotics", "--no-throughput")
    a_file, missing, empty = tmp_path / "a.txt", tmp_path / "typo", tmp_path / "empty"
    a_file.write_text("not a store\n", encoding="utf-8")
    empty.mkdir()
    cases = {
        a_file: (2, f"VALIDATION_ERROR: 'path:{a_file}' names a file, not a folder"),
        missing: (2, f"VALIDATION_ERROR: --against path:{missing}: {missing} does not exist."),
        sample_home: (2, f"it is inside ragsonde's home {sample_home}"),
        empty: (
            1,
            f"COLLECTION_NOT_FOUND: Collection 'robotics' does not exist at path:{empty}. "
            "There are no collections yet. Copy it there with `ragsonde push --collection "
            f"robotics --to path:{empty}`.",
        ),
    }
    before = {p.name for p in sample_home.iterdir()} - {"history.sqlite"}  # eval's, any run
    for folder, (code, said) in cases.items():
        res = run(*args, "--against", f"path:{folder}", env=env, timeout=300)
        assert res.returncode == code, (folder, res.stderr)
        assert said in " ".join(res.stderr.split()), (folder, res.stderr)
        assert "ingest" not in res.stderr and "server running" not in res.stderr, res.stderr
        assert res.stdout == "", (folder, res.stdout)  # the embedded side never ran
    assert not missing.exists()
    assert {p.name for p in sample_home.iterdir()} - {"history.sqlite"} == before
