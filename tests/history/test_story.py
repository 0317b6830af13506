"""``history diff`` on a short real history (see the ``story`` fixture): each step names exactly
the fingerprint fields it changed, queries that flipped are listed beside the paired tests, and
a change of labels is refused as a like-for-like comparison."""

from __future__ import annotations

import json

import pytest

from tests.support import Cli

#: What each step changes in the fingerprint, and nothing else.
EXPECTED = {
    ("baseline", "hnsw_ef"): ["search.hnsw_ef"],
    ("hnsw_ef", "chunks"): ["content.sample_sha256", "content.sampled", "index.points_count"],
    ("chunks", "labels"): ["benchmark.labels_sha256"],
}


def _diff(cli: Cli, story, a: str, b: str, *more: str) -> dict:
    r = cli(
        "history", "diff", str(story.runs[a]), str(story.runs[b]),
        "--history", str(story.history), "--json", *more,
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def test_each_step_names_exactly_the_fields_it_changed(cli: Cli, story):
    for (a, b), fields in EXPECTED.items():
        diff = _diff(cli, story, a, b)
        assert [c["field"] for c in diff["changes"]] == fields, (a, b)
    hnsw = _diff(cli, story, "baseline", "hnsw_ef")["changes"][0]
    assert (hnsw["a"], hnsw["b"]) == (None, 8)


def test_a_reingest_flips_queries_and_tests_the_difference(cli: Cli, story):
    diff = _diff(cli, story, "hnsw_ef", "chunks")
    assert diff["like_for_like"] is True and diff["refused"] is None
    compared = {m["metric"]: m for m in diff["metrics"]}
    assert diff["flip_metric"] == "hit_rate@10" and "hit_rate@10" in compared
    hit = compared["hit_rate@10"]
    # every flip is one query's move; the paired test and the interval stand beside them
    lost = sum(f["direction"] == "lost" for f in diff["flips"])
    gained = sum(f["direction"] == "gained" for f in diff["flips"])
    assert (lost, gained) == (hit["losses"], hit["wins"])
    assert diff["flips"], "32-token chunks changed no query's hit on the sample benchmark"
    assert 0 <= hit["p_ttest"] <= 1 and hit["ci_low"] <= hit["delta"] <= hit["ci_high"]
    assert hit["verdict"] in ("better", "worse", "no significant difference")
    r = cli("history", "diff", str(story.runs["hnsw_ef"]), str(story.runs["chunks"]),
            "--history", str(story.history))  # fmt: skip
    assert "queries that flipped on hit_rate@10" in r.stdout
    assert diff["flips"][0]["query_id"] in r.stdout
    assert "p perm" in r.stdout and "CI of Δ" in r.stdout


def test_a_label_change_is_refused_like_for_like(cli: Cli, story):
    diff = _diff(cli, story, "chunks", "labels")
    assert diff["like_for_like"] is False and diff["metrics"] == [] and diff["flips"] == []
    assert "different benchmarks" in diff["refused"]
    assert "benchmark.labels_sha256" in diff["refused"]
    marked = _diff(cli, story, "chunks", "labels", "--across-benchmarks")
    assert marked["like_for_like"] is False and marked["metrics"]
    # a baseline of another label set is never chosen by `last`, and refused by id
    from ragsonde.errors import QueryValidationError
    from ragsonde.history import HistoryStore
    from ragsonde.history.baseline import resolve_baseline

    with HistoryStore(story.history) as hs:
        labels_hash = hs.fingerprint(story.runs["labels"]).benchmark.sha256
    with pytest.raises(QueryValidationError, match="no run 'last' of this benchmark"):
        resolve_baseline("last", story.history, labels_hash, exclude=story.runs["labels"])
    with pytest.raises(QueryValidationError, match="another benchmark"):
        resolve_baseline(str(story.runs["chunks"]), story.history, labels_hash)
