"""Traffic in bounded memory gives the report the whole-list code gave.

Oracles: :func:`ragsonde.traffic.shape.merge` and :func:`~ragsonde.traffic.shape.sample_by_time`
(the one-pass, all-in-memory shaping) for the two-pass scan; the whole-list views of
:mod:`ragsonde.traffic.views` (``drift``, ``production_summary``, ``wilson``) and plain sorting
for the bounded :class:`~ragsonde.traffic.tally.Tally`; and, with the real model, the report of
the same traffic held in memory for the spooled one (every row, every aggregate, the JSON).
"""

from __future__ import annotations

import gc
import json
import random
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.traffic.read import READERS, read_traffic, scan_traffic, traffic_hash
from ragsonde.traffic.records import ReadStats
from ragsonde.traffic.report import QueryHealth
from ragsonde.traffic.shape import merge, sample_by_time
from ragsonde.traffic.tally import SHOWN, Tally
from ragsonde.traffic.views import drift, production_summary, wilson
from tests.support import robotics_hybrid

T0 = datetime(2026, 10, 1, 8, 0, tzinfo=UTC)
WORDS = [
    "lidar",
    "battery",
    "motor",
    "wheel",
    "camera",
    "servo",
    "gripper",
    "arm",
    "sensor",
    "map",
    "route",
    "charge",
]


def _log(path: Path, n: int, seed: int, days: int = 9) -> Path:
    """``n`` records of a chat log: repeated texts (case and spaces varied), times over
    ``days`` days in two UTC offsets, ids for some (one id on two texts), production answers
    on some records only (a later duplicate may carry it)."""
    rng = random.Random(seed)
    texts = [" ".join(rng.sample(WORDS, rng.randint(2, 5))) for _ in range(n // 3)]
    rows = []
    for _ in range(n):
        text = rng.choice(texts)
        if rng.random() < 0.3:
            text = "  " + text.upper().replace(" ", "   ")
        t = T0 + timedelta(minutes=rng.randint(0, days * 24 * 60))
        tz = timezone(timedelta(hours=2)) if rng.random() < 0.5 else UTC
        row: dict[str, Any] = {"query": text, "timestamp": t.astimezone(tz).isoformat()}
        if rng.random() < 0.2:
            row["query_id"] = f"q{rng.randint(0, 30)}"
        if rng.random() < 0.3:
            row["ids"] = [f"d{rng.randint(0, 9)}" for _ in range(3)]
            row["top_k"] = rng.choice([3, 10])
        if rng.random() < 0.05:
            row.pop("timestamp")
        rows.append(json.dumps(row))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def _merged(path: Path, **window: Any) -> tuple[list[Any], ReadStats]:
    stats = ReadStats()
    return merge(READERS["jsonl"](path, stats), stats, **window), stats


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_two_passes_merge_as_one_pass_in_memory(tmp_path: Path, seed: int) -> None:
    log = _log(tmp_path / "chat.jsonl", 600, seed)
    window = {"since": T0 + timedelta(days=1), "until": T0 + timedelta(days=7)}
    for kw in ({}, window):
        expected, stats = _merged(log, **kw)
        got = read_traffic([log], **kw)
        assert [q.model_dump(exclude={"source"}) for q in got.queries] == [
            q.model_dump(exclude={"source"}) for q in expected
        ]
        assert [q.source for q in got.queries] == [q.source for q in expected]
        for field in ("records", "outside_window", "duplicates_merged", "malformed"):
            assert getattr(got.stats, field) == getattr(stats, field), field
        assert len(scan_traffic([log], **kw).queries) == len(expected)
    assert len({q.query_id for q in got.queries}) == len(got.queries)


def test_the_streamed_sample_is_the_in_memory_sample(tmp_path: Path) -> None:
    log = _log(tmp_path / "chat.jsonl", 900, 5)
    for n, seed in ((50, 0), (120, 7), (10_000, 1)):
        expected, stats = _merged(log)
        expected = sample_by_time(expected, n, seed, stats)
        got = read_traffic([log], sample=n, seed=seed)
        assert [q.query_id for q in got.queries] == [q.query_id for q in expected]
        assert got.stats.sampled_out == stats.sampled_out


def test_a_stream_is_read_again_on_each_pass(tmp_path: Path) -> None:
    log = _log(tmp_path / "chat.jsonl", 300, 9)
    stream = scan_traffic([log]).queries
    first, second = list(stream), list(stream)
    assert [q.model_dump() for q in first] == [q.model_dump() for q in second]
    assert traffic_hash(first) == traffic_hash(reversed(second))  # order-free


def _rows(n: int, seed: int) -> list[QueryHealth]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        predicted = None if rng.random() < 0.05 else rng.choice([0.0, 0.05, round(rng.random(), 3)])
        t = T0 + timedelta(hours=rng.randint(0, 24 * (90 if seed % 2 else 20)))
        agreement = round(rng.random(), 2) if rng.random() < 0.4 else None
        mismatch = []
        if agreement is not None and rng.random() < 0.5:
            mismatch = [
                rng.choice(["top_k: production 3, replay 10", "mode: production x, replay dense"])
            ]
        out.append(
            QueryHealth(
                query=" ".join(rng.sample(WORDS, 3)),
                query_id=f"id{rng.randint(0, 10**6)}-{i}",
                weight=rng.choice([1, 1, 1, 2, 5]),
                first_seen=t.isoformat() if rng.random() < 0.9 else None,
                predicted=predicted,
                weak=predicted is not None and predicted < 0.1,
                signals={},
                production_agreement=agreement,
                mismatch=mismatch,
            )
        )
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_tally_says_what_the_whole_list_says(seed: int) -> None:
    rows = _rows(700, seed)
    tally = Tally()
    for r in rows:
        tally.add(r, None)
    n_weak = sum(r.weak for r in rows)
    total = sum(r.weight for r in rows)
    share, interval, weighted = tally.share()
    assert share == round(n_weak / len(rows), 4) and interval == wilson(n_weak, len(rows))
    assert weighted == round(sum(r.weight for r in rows if r.weak) / total, 4)
    scored = [r for r in rows if r.predicted is not None]
    weakest = sorted(scored, key=lambda r: (r.predicted or 0.0, -r.weight))[:SHOWN]
    assert [r.query_id for r in tally.weakest()] == [r.query_id for r in weakest]
    frequent = sorted(rows, key=lambda r: (-r.weight, r.query_id))[:SHOWN]
    assert [r.query_id for r in tally.frequent()] == [r.query_id for r in frequent]
    assert tally.drift() == drift(rows)
    assert tally.production() == production_summary(rows)


@pytest.fixture(scope="module")
def robotics_home(tmp_path_factory: pytest.TempPathFactory, embedder: OnnxEmbedder) -> Path:
    """The sample robotics docs with dense and BM25 vectors."""
    return robotics_hybrid(tmp_path_factory.mktemp("streaming"), embedder)


@pytest.mark.slow
def test_a_spooled_report_is_the_in_memory_report(
    robotics_home: Path, embedder: OnnxEmbedder, tmp_path: Path
) -> None:
    """A few thousand generated records (about 1,500 distinct queries) reported twice: held in
    memory, and streamed with the rows spooled past 200. Same rows, same aggregates, same JSON;
    the aggregates are the whole-list views' too, and the history records the same run."""
    import jsonschema

    from ragsonde.config import Settings
    from ragsonde.history.store import HistoryStore
    from ragsonde.traffic.record import record_traffic
    from ragsonde.traffic.report import SCHEMA_FILE, read_report
    from ragsonde.traffic.run import TrafficOptions, analyse
    from ragsonde.workspace import Workspace

    log = _log(tmp_path / "chat.jsonl", 4500, 11, days=70)
    options = TrafficOptions(record=False)
    with Workspace(Settings(home=robotics_home, collection="robotics"), embedder=embedder) as ws:
        whole = analyse(read_traffic([log]), ws, options, in_memory=10**9)
        streamed = analyse(scan_traffic([log]), ws, options, in_memory=200)
        history = tmp_path / "history.sqlite"
        run_id = record_traffic(streamed, ws, record=True, history=history)
    assert whole.complete and not streamed.complete
    assert 1000 < whole.n_queries < 2000 and len(streamed.queries) <= 2 * SHOWN
    rows = list(whole.queries)
    assert [r.model_dump() for r in streamed.rows()] == [r.model_dump() for r in rows]
    assert sum(r.weak for r in rows) > 10  # random words: some of them retrieve weakly
    skip = {"created_at", "queries"}
    assert streamed.model_dump(exclude=skip) == whole.model_dump(exclude=skip)
    n_weak = sum(r.weak for r in rows)
    assert streamed.weak_share == round(n_weak / len(rows), 4)
    assert (streamed.drift, streamed.drift_unit) == drift(rows)
    assert streamed.drift_unit == "week"
    assert streamed.production == production_summary(rows)
    assert streamed.traffic_hash == traffic_hash(read_traffic([log]).queries)
    out = tmp_path / "report.json"
    with out.open("w", encoding="utf-8") as f:
        streamed.write_json(f)
    written = json.loads(out.read_text(encoding="utf-8"))
    expected = json.loads(whole.model_dump_json())
    assert {k: v for k, v in written.items() if k != "created_at"} == {
        k: v for k, v in expected.items() if k != "created_at"
    }
    jsonschema.validate(written, json.loads(SCHEMA_FILE.read_text(encoding="utf-8")))
    pretty = tmp_path / "pretty.json"  # another layout of the same JSON: read whole
    pretty.write_text(whole.model_dump_json(indent=2), encoding="utf-8")
    for path in (out, pretty):
        header, again = read_report(path)
        assert [r.model_dump() for r in again] == [r.model_dump() for r in rows]
        assert header.model_dump(exclude=skip) == whole.model_dump(exclude=skip)
    assert run_id is not None
    with HistoryStore(history) as hs:
        recorded = hs.get(run_id).report
    assert len(recorded.per_query) == len(rows)  # under HISTORY_ROWS: every query
    mean = sum(r.predicted for r in rows if r.predicted is not None) / sum(
        r.predicted is not None for r in rows
    )
    assert recorded.metrics["predicted"] == round(mean, 6)
    spool = streamed._spool  # the file the rows went to: deleted with the report
    assert spool is not None and spool.is_file()
    del streamed
    gc.collect()
    assert not spool.exists()
