"""The compact first pass (:mod:`ragsonde.traffic.scan` over :class:`~ragsonde.traffic.table.
HashTable`) merges, weighs, numbers and samples a few thousand queries exactly as the
in-memory path does.

Oracles: a plain dict for the table, a Counter for the term counts; :func:`ragsonde.traffic.shape.merge` and
:func:`~ragsonde.traffic.shape.sample_by_time` (the one-pass, all-in-memory shaping) for the
scan, on more distinct queries than the table holds before it first merges its new keys into
the sorted arrays (so the lookups, updates and merges of both halves are all exercised).
"""

from __future__ import annotations

import random
import tempfile
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.traffic.read import read_traffic, scan_traffic
from ragsonde.traffic.scan import Scan
from ragsonde.traffic.shape import sample_by_time
from ragsonde.traffic.table import CHUNK, HashCounts, HashTable
from ragsonde.traffic.tally import Tally
from ragsonde.traffic.views import term_counts, topics
from tests.traffic.test_streaming import T0, _log, _merged, _rows


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


def test_the_plan_is_a_nameless_file_and_two_readings_agree(
    big_log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second pass's plan leaves no file behind, even for a process that is killed: it
    has no name. Two iterations at once read it each from its own position."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    traffic = scan_traffic([big_log], sample=700, seed=1)
    assert list(tmp_path.iterdir()) == []
    pairs = list(zip(traffic.queries, traffic.queries, strict=True))
    assert len(pairs) == len(traffic.queries) == 700
    assert all(a.model_dump() == b.model_dump() for a, b in pairs)


def test_a_file_changed_between_the_passes_is_an_error(tmp_path: Path) -> None:
    """The first pass numbers the records; a file rewritten or cut before the second pass
    would have it yield other queries, or fewer, as the traffic's."""
    log = _log(tmp_path / "chat.jsonl", 300, 5)
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    traffic = scan_traffic([log])
    log.write_text("".join(reversed(lines)), encoding="utf-8")
    with pytest.raises(QueryValidationError, match="changed while they were read: record"):
        list(traffic.queries)
    log.write_text("".join(lines), encoding="utf-8")
    traffic = scan_traffic([log])
    log.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    with pytest.raises(QueryValidationError, match="fewer records"):
        list(traffic.queries)


def test_a_scan_must_be_done_before_it_is_read() -> None:
    with pytest.raises(RuntimeError):
        Scan().first_seen(0)


@pytest.mark.parametrize("pending", [1, 5, 1 << 16])
def test_hash_counts_count_as_a_counter_does(pending: int) -> None:
    rng = random.Random(pending)
    keys = [rng.getrandbits(64) for _ in range(200)] + [0, 2**64 - 1]
    counts, oracle = HashCounts(pending), Counter[int]()
    for _ in range(400):
        batch = rng.sample(keys, rng.randint(0, 6))
        counts.add(batch)
        oracle.update(batch)
    assert len(counts) == len(oracle)
    assert all(counts.count(k) == oracle[k] for k in keys)
    assert counts.count(next(k for k in range(10) if k not in oracle)) == 0


def test_the_tally_names_topics_from_every_query_s_terms() -> None:
    """The topics of :class:`Tally` (compact term counts) are those of
    :func:`~ragsonde.traffic.views.topics` given every query's terms counted in a Counter."""
    rows = _rows(900, 3)
    rng = random.Random(0)
    vectors = [[rng.gauss(0, 1) for _ in range(8)] for _ in rows]
    tally = Tally()
    for r, v in zip(rows, vectors, strict=True):
        tally.add(r, v)
    df = term_counts([r.query for r in rows])
    weak = [(r, v) for r, v in zip(rows, vectors, strict=True) if r.weak]
    assert len(weak) > 20
    assert tally.topics() == topics(weak, lambda t: df.get(t, 0), len(rows))


def test_a_merged_weight_stops_at_int64s_top_and_never_wraps() -> None:
    """numpy's ``+=`` on an int64 column wraps past 2**63 - 1 to a negative weight, silently."""
    from ragsonde.traffic.records import TrafficQuery

    scan = Scan()
    for number in range(3):
        assert scan.add(7, TrafficQuery(query="q", query_id="", weight=2**62), number) == (
            number > 0
        )
    scan.done()
    assert scan.weight is not None and int(scan.weight[0]) == 2**63 - 1


def test_a_row_weighing_over_the_most_one_row_may_count_is_malformed(tmp_path: Path) -> None:
    log = tmp_path / "w.jsonl"
    log.write_text(
        '{"query": "a", "weight": 1e19}\n{"query": "b", "weight": 9223372036854775807}\n'
        '{"query": "c", "weight": 1000000000}\n{"query": "c", "weight": 1000000000}\n',
        encoding="utf-8",
    )
    traffic = read_traffic([log])
    assert [(q.query, q.weight) for q in traffic.queries] == [("c", 2_000_000_000)]
    assert traffic.stats.malformed == 2
    assert all("the most one row may count" in e for e in traffic.stats.examples)
