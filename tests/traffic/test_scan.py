"""The compact first pass (:mod:`ragsonde.traffic.scan` over :class:`~ragsonde.traffic.table.
HashTable`) merges, weighs, numbers and samples a few thousand queries exactly as the
in-memory path does.

Oracles: a plain dict for the table; :func:`ragsonde.traffic.shape.merge` and
:func:`~ragsonde.traffic.shape.sample_by_time` (the one-pass, all-in-memory shaping) for the
scan, on more distinct queries than the table holds before it first merges its new keys into
the sorted arrays (so the lookups, updates and merges of both halves are all exercised).
"""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

import pytest

from ragsonde.traffic.read import read_traffic
from ragsonde.traffic.scan import Scan
from ragsonde.traffic.shape import sample_by_time
from ragsonde.traffic.table import CHUNK, HashTable
from tests.traffic.test_streaming import T0, _log, _merged


@pytest.mark.parametrize("chunk", [1, 7, 64])
def test_the_table_counts_as_a_dict_does(chunk: int) -> None:
    rng = random.Random(chunk)
    keys = [rng.getrandbits(64) for _ in range(300)] + [0, 2**64 - 1, 2**63]
    table, oracle = HashTable({"n": "q", "last": "Q"}, chunk=chunk), {}
    for _ in range(3000):
        key = rng.choice(keys)
        found = table.find(key)
        assert (found is None) == (key not in oracle)
        if found is None:
            table.insert(key, (1, key))
            oracle[key] = [1, key]
        else:
            cols, i = found
            cols["n"][i] += 1
            oracle[key][0] += 1
    assert len(table) == len(oracle)
    cols = table.freeze()
    assert table.keys.tolist() == sorted(oracle)
    assert cols["n"].tolist() == [oracle[k][0] for k in sorted(oracle)]
    assert cols["last"].tolist() == sorted(oracle)
    assert all(table.row(k) == i for i, k in enumerate(sorted(oracle)))
    assert table.row(next(k for k in range(10) if k not in oracle)) is None


def _distinct(path: Path) -> int:
    return len(_merged(path)[0])


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """24,000 records of about 4,800 distinct texts: past the table's first merge."""
    path = _log(tmp_path_factory.mktemp("scan") / "chat.jsonl", 24_000, 11)
    assert _distinct(path) > CHUNK
    return path


def test_a_compact_scan_merges_as_the_in_memory_path(big_log: Path) -> None:
    window = {"since": T0 + timedelta(days=1), "until": T0 + timedelta(days=7)}
    for kw in ({}, window):
        expected, stats = _merged(big_log, **kw)
        got = read_traffic([big_log], **kw)
        assert [q.model_dump() for q in got.queries] == [q.model_dump() for q in expected]
        assert got.stats.model_dump(exclude={"files"}) == stats.model_dump(exclude={"files"})
    suffixed = [q.query_id for q in got.queries if q.query_id.count("-") and q.query_id[0] == "q"]
    assert suffixed  # texts sharing a logged id were numbered


def test_a_compact_scan_samples_as_the_in_memory_path(big_log: Path) -> None:
    for n, seed in ((500, 0), (3000, 4)):
        expected, stats = _merged(big_log)
        expected = sample_by_time(expected, n, seed, stats)
        got = read_traffic([big_log], sample=n, seed=seed)
        assert [q.model_dump() for q in got.queries] == [q.model_dump() for q in expected]
        assert got.stats.sampled_out == stats.sampled_out


def test_a_scan_must_be_done_before_it_is_read() -> None:
    with pytest.raises(RuntimeError):
        Scan().first_seen(0)
