"""Shaping the traffic with bounded memory: two passes over the files.

The first pass (:func:`scan`) keeps, per distinct query, an 8-byte hash of its normalised text
and a few numbers in flat arrays (the first record's number, the summed weight, the earliest
time, the suffix that keeps its id unique): about 200 bytes a distinct query (tracemalloc; the
two hash tables are most of it), not the query. A sample (:func:`sample_scan`) is drawn from
those numbers. The second pass (:func:`emit`) reads the
files again and yields each kept query at its first record, merged as
:func:`~ragsonde.traffic.shape.merge` merges it (same order, weights, times, ids and production
answers), one at a time.

Two distinct texts whose 64-bit hashes collide would be merged: for 100,000 distinct queries the
chance is about 3 in 10^10.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta, timezone

from ragsonde.traffic.records import Production, ReadStats, TrafficQuery
from ragsonde.traffic.shape import day_of, normalise, query_id_of, stratified

__all__ = ["Scan", "emit", "key_of", "sample_scan", "scan"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_NO_TIME = -(2**63)


def key_of(text: str) -> int:
    """The 8-byte hash duplicates are found by (of the normalised text)."""
    digest = hashlib.blake2b(normalise(text).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _micros(t: datetime) -> int:
    return (t - _EPOCH) // _US


def _offset(t: datetime) -> int:
    off = t.utcoffset()
    return int(off.total_seconds()) if off is not None else 0


class Scan:
    """The first pass's account: one slot per distinct query, in order of first reading."""

    def __init__(self) -> None:
        self.slot: dict[int, int] = {}  # text hash -> slot
        self.first = array("q")  # the number of the slot's first record
        self.weight = array("q")
        self.seen = array("q")  # earliest time, microseconds since the epoch (_NO_TIME: none)
        self.offset = array("l")  # that time's UTC offset, seconds
        self.suffix = array("l")  # 0, or n: the id is "<id>-<n + 1>" (two texts, one id)
        self.has_production = bytearray()
        self.kept = bytearray()  # 1: analysed (not sampled out)
        self.production: dict[int, Production] = {}  # slot -> a later record's answer
        self._ids: dict[int, int] = {}  # id hash -> texts holding it so far

    def __len__(self) -> int:
        return len(self.first)

    @property
    def n_kept(self) -> int:
        return sum(self.kept)

    def first_seen(self, slot: int) -> datetime | None:
        us = self.seen[slot]
        if us == _NO_TIME:
            return None
        off = self.offset[slot]
        tz = UTC if off == 0 else timezone(timedelta(seconds=off))
        return (_EPOCH + us * _US).astimezone(tz)

    def _new(self, record: TrafficQuery, number: int) -> int:
        slot = len(self.first)
        self.first.append(number)
        self.weight.append(record.weight)
        t = record.first_seen
        self.seen.append(_micros(t) if t is not None else _NO_TIME)
        self.offset.append(_offset(t) if t is not None else 0)
        qid = record.query_id or query_id_of(record.query)
        h = int.from_bytes(hashlib.blake2b(qid.encode("utf-8"), digest_size=8).digest(), "little")
        n = self._ids.get(h, 0)
        self._ids[h] = n + 1
        self.suffix.append(n)
        self.has_production.append(record.production is not None)
        self.kept.append(1)
        return slot

    def _merge(self, slot: int, record: TrafficQuery) -> None:
        self.weight[slot] += record.weight
        t = record.first_seen
        if t is not None:
            us = _micros(t)
            if self.seen[slot] == _NO_TIME or us < self.seen[slot]:
                self.seen[slot], self.offset[slot] = us, _offset(t)
        if (
            not self.has_production[slot]
            and record.production is not None
            and slot not in self.production
        ):
            self.production[slot] = record.production


def _outside(t: datetime | None, since: datetime | None, until: datetime | None) -> bool:
    if t is None:
        return bool(since or until)  # a window asked for, and this record has no time
    return bool((since and t < since) or (until and t >= until))


def scan(
    records: Iterable[TrafficQuery],
    stats: ReadStats,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
) -> Scan:
    """The first pass: count, window and merge ``records`` into a :class:`Scan`."""
    out = Scan()
    for number, record in enumerate(records):
        stats.records += 1
        if _outside(record.first_seen, since, until):
            stats.outside_window += 1
            continue
        key = key_of(record.query)
        slot = out.slot.get(key)
        if slot is None:
            out.slot[key] = out._new(record, number)
        else:
            stats.duplicates_merged += 1
            out._merge(slot, record)
    return out


def sample_scan(s: Scan, n: int, seed: int, stats: ReadStats) -> None:
    """Keep ``n`` of the scanned queries, as :func:`~ragsonde.traffic.shape.sample_by_time`
    draws them (the same strata, quotas and random draws: the same sample)."""
    total = len(s)
    if n >= total:
        return
    keep = stratified([day_of(s.first_seen(i)) for i in range(total)], n, seed)
    for i in range(total):
        s.kept[i] = i in keep
    stats.sampled_out += total - len(keep)


def emit(
    records: Iterable[TrafficQuery],
    s: Scan,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
) -> Iterator[TrafficQuery]:
    """The second pass over the same records: each kept query once, merged, at its first record."""
    for number, record in enumerate(records):
        if _outside(record.first_seen, since, until):
            continue
        slot = s.slot.get(key_of(record.query))
        if slot is None or s.first[slot] != number or not s.kept[slot]:
            continue
        qid = record.query_id or query_id_of(record.query)
        n = s.suffix[slot]
        record.query_id = f"{qid}-{n + 1}" if n else qid
        record.weight = s.weight[slot]
        record.first_seen = s.first_seen(slot)
        if record.production is None:
            record.production = s.production.get(slot)
        yield record
