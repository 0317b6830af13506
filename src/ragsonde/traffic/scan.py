"""Shaping the traffic with bounded memory: two passes over the files.

The first pass (:func:`scan`) keeps, per distinct query, an 8-byte hash of its normalised text
and a few numbers (the first record's number, the summed weight, the earliest time, the hash of
its id), not the query: about 50 bytes a distinct query, in numpy arrays sorted by the hash
(:class:`~ragsonde.traffic.table.HashTable`: a bounded dict takes the newest distinct queries
and is merged into the sorted arrays when full). A sample (:func:`sample_scan`) is drawn from
those numbers. The second pass (:func:`emit`) reads the files again and yields each kept query
at its first record, merged as :func:`~ragsonde.traffic.shape.merge` merges it (same order,
weights, times, ids and production answers), one at a time.

Two distinct texts whose 64-bit hashes collide would be merged: for 100,000 distinct queries the
chance is about 3 in 10^10.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING

from ragsonde.traffic.records import Production, ReadStats, TrafficQuery
from ragsonde.traffic.shape import day_of, normalise, query_id_of, stratified
from ragsonde.traffic.table import HashTable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Scan", "emit", "key_of", "sample_scan", "scan"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_NO_TIME = -(2**63)
#: The columns kept per distinct query while reading (``seen``: earliest time, microseconds
#: since the epoch, or _NO_TIME; ``offset``: that time's UTC offset, seconds; ``id``: the hash
#: of its id; ``has_production``: its first record carried the production answer).
_COLUMNS = {
    "first": "q",
    "weight": "q",
    "seen": "q",
    "offset": "i",
    "id": "Q",
    "has_production": "q",
}


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
    """The first pass's account: one row per distinct query, in the order of its text hash.

    While reading, :meth:`add` merges records into a :class:`HashTable`; :meth:`done` freezes
    it into arrays (row ``i`` is the query of hash ``table.keys[i]``): ``first`` (the number of
    its first record: the reading order), ``weight``, ``seen``, ``offset``, ``suffix`` (0, or
    n: the id is ``"<id>-<n + 1>"``, two texts holding one id) and ``kept`` (1: analysed, not
    sampled out)."""

    def __init__(self) -> None:
        self.table = HashTable(_COLUMNS)
        self.production: dict[int, Production] = {}  # text hash -> a later record's answer
        self.kept = bytearray()
        self.first: npt.NDArray[np.int64] | None = None
        self.weight: npt.NDArray[np.int64] | None = None
        self.seen: npt.NDArray[np.int64] | None = None
        self.offset: npt.NDArray[np.int32] | None = None
        self.suffix: npt.NDArray[np.int32] | None = None

    def __len__(self) -> int:
        return len(self.table)

    @property
    def n_kept(self) -> int:
        return sum(self.kept)

    def add(self, key: int, record: TrafficQuery, number: int) -> bool:
        """Merge ``record`` (the ``number``-th read) into the query of text hash ``key``;
        True when it is a duplicate."""
        t = record.first_seen
        us = _micros(t) if t is not None else _NO_TIME
        found = self.table.find(key)
        if found is None:
            qid = record.query_id or query_id_of(record.query)
            digest = hashlib.blake2b(qid.encode("utf-8"), digest_size=8).digest()
            has = record.production is not None
            row = (number, record.weight, us, _offset(t) if t is not None else 0)
            self.table.insert(key, (*row, int.from_bytes(digest, "little"), has))
            return False
        cols, i = found
        cols["weight"][i] += record.weight
        if us != _NO_TIME and (cols["seen"][i] == _NO_TIME or us < cols["seen"][i]):
            cols["seen"][i] = us
            cols["offset"][i] = _offset(t) if t is not None else 0
        if (
            record.production is not None
            and not cols["has_production"][i]
            and key not in self.production
        ):
            self.production[key] = record.production
        return True

    def done(self) -> None:
        """Freeze the table (after the last :meth:`add`) and number the texts sharing an id."""
        import numpy as np

        cols = self.table.freeze()
        self.first, self.weight, self.seen = cols["first"], cols["weight"], cols["seen"]
        self.offset = cols["offset"]
        ids, n = cols["id"], len(cols["id"])
        by_id = np.lexsort((self.first, ids))  # the texts of one id, in reading order
        run = np.ones(n, dtype=bool)
        run[1:] = ids[by_id][1:] != ids[by_id][:-1]
        starts = np.maximum.accumulate(np.where(run, np.arange(n), 0))
        self.suffix = np.empty(n, dtype=np.int32)
        self.suffix[by_id] = np.arange(n) - starts
        self.kept = bytearray(b"\x01" * n)

    def reading_order(self) -> list[int]:
        """The rows in the order their queries were first read."""
        import numpy as np

        if self.first is None:
            raise RuntimeError("Scan.done() was not called")
        return [int(i) for i in np.argsort(self.first, kind="stable")]

    def first_seen(self, row: int) -> datetime | None:
        if self.seen is None or self.offset is None:
            raise RuntimeError("Scan.done() was not called")
        us = int(self.seen[row])
        if us == _NO_TIME:
            return None
        off = int(self.offset[row])
        tz = UTC if off == 0 else timezone(timedelta(seconds=off))
        return (_EPOCH + us * _US).astimezone(tz)


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
        if out.add(key_of(record.query), record, number):
            stats.duplicates_merged += 1
    out.done()
    return out


def sample_scan(s: Scan, n: int, seed: int, stats: ReadStats) -> None:
    """Keep ``n`` of the scanned queries, as :func:`~ragsonde.traffic.shape.sample_by_time`
    draws them (the same strata, quotas and random draws: the same sample)."""
    total = len(s)
    if n >= total:
        return
    order = s.reading_order()
    days: dict[str, str] = {}  # one string a day, shared by its queries
    strata = [days.setdefault(d, d) for d in (day_of(s.first_seen(r)) for r in order)]
    keep = stratified(strata, n, seed)
    for i, row in enumerate(order):
        s.kept[row] = i in keep
    stats.sampled_out += total - len(keep)


def emit(
    records: Iterable[TrafficQuery],
    s: Scan,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
) -> Iterator[TrafficQuery]:
    """The second pass over the same records: each kept query once, merged, at its first record."""
    if s.first is None or s.weight is None or s.suffix is None:
        raise RuntimeError("Scan.done() was not called")
    for number, record in enumerate(records):
        if _outside(record.first_seen, since, until):
            continue
        key = key_of(record.query)
        slot = s.table.row(key)
        if slot is None or s.first[slot] != number or not s.kept[slot]:
            continue
        qid = record.query_id or query_id_of(record.query)
        n = int(s.suffix[slot])
        record.query_id = f"{qid}-{n + 1}" if n else qid
        record.weight = int(s.weight[slot])
        record.first_seen = s.first_seen(slot)
        if record.production is None:
            record.production = s.production.get(key)
        yield record
