"""Shaping the traffic with bounded memory: two passes over the files.

The first pass (:func:`scan`) keeps, per distinct query, an 8-byte hash of its normalised text
and a few numbers (the first record's number, the summed weight, the earliest time, the hash of
its id), not the query: about 50 bytes a distinct query, in numpy arrays sorted by the hash
(:class:`~ragsonde.traffic.table.HashTable`: a bounded dict takes the newest distinct queries
and is merged into the sorted arrays when full). A sample (:func:`sample_scan`) is drawn from
those numbers. Then :meth:`Scan.plan` writes what the second pass needs of each kept query (the
number of its first record, its merged weight and time, its id's suffix, its text hash), in
reading order, to an anonymous temporary file (40 bytes a query, deleted by the system when it
is closed), and the arrays are freed: the second pass holds nothing per query. The
second pass (:func:`emit`) reads the files again beside that file and yields each kept query at
its first record, merged as :func:`~ragsonde.traffic.shape.merge` merges it (same order,
weights, times, ids and production answers), one at a time; a record that is not the one the
first pass saw there (the file changed between the passes) is an error, not a wrong query.

Two distinct texts whose 64-bit hashes collide would be merged: for 100,000 distinct queries the
chance is about 3 in 10^10.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING

from ragsonde.errors import QueryValidationError
from ragsonde.traffic.records import Production, ReadStats, TrafficQuery
from ragsonde.traffic.shape import Repeats, day_of, normalise, query_id_of, stratified
from ragsonde.traffic.table import HashTable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Plan", "Scan", "emit", "key_of", "sample_scan", "scan"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_US = timedelta(microseconds=1)
_NO_TIME = -(2**63)
_MOST = 2**63 - 1  # a merged weight stops here
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


#: One kept query in a :class:`Plan`'s file (numpy dtype fields: name, type).
_PLANNED = [
    ("first", "<i8"),
    ("weight", "<i8"),
    ("seen", "<i8"),
    ("key", "<u8"),
    ("offset", "<i4"),
    ("suffix", "<i4"),
]
#: Rows of a :class:`Plan` written or read at once.
_PLAN_ROWS = 4096


def key_of(text: str) -> int:
    """The 8-byte hash duplicates are found by (of the normalised text)."""
    digest = hashlib.blake2b(normalise(text).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def _id_key(query_id: str) -> int:
    """The 8-byte hash a query's id is kept by."""
    return int.from_bytes(
        hashlib.blake2b(query_id.encode("utf-8"), digest_size=8).digest(), "little"
    )


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
    n: the n-th repeat of its id, named by :class:`~ragsonde.traffic.shape.Repeats`), ``ids``
    (every id's hash, sorted) and ``kept`` (1: analysed, not sampled out)."""

    def __init__(self) -> None:
        self.table = HashTable(_COLUMNS)
        self.production: dict[int, Production] = {}  # text hash -> a later record's answer
        self.kept = bytearray()
        self.first: npt.NDArray[np.int64] | None = None
        self.weight: npt.NDArray[np.int64] | None = None
        self.seen: npt.NDArray[np.int64] | None = None
        self.offset: npt.NDArray[np.int32] | None = None
        self.suffix: npt.NDArray[np.int32] | None = None
        self.ids: npt.NDArray[np.uint64] | None = None  # every query's id hash, sorted

    def __len__(self) -> int:
        return len(self.table)

    def add(self, key: int, record: TrafficQuery, number: int) -> bool:
        """Merge ``record`` (the ``number``-th read) into the query of text hash ``key``;
        True when it is a duplicate."""
        t = record.first_seen
        us = _micros(t) if t is not None else _NO_TIME
        found = self.table.find(key)
        if found is None:
            qid = record.query_id or query_id_of(record.query)
            has = record.production is not None
            row = (number, record.weight, us, _offset(t) if t is not None else 0)
            self.table.insert(key, (*row, _id_key(qid), has))
            return False
        cols, i = found
        # summed as Python ints and held at int64's top: numpy's += would wrap to negative
        cols["weight"][i] = min(int(cols["weight"][i]) + record.weight, _MOST)
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
        self.ids = np.unique(ids)
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
        return _time(int(self.seen[row]), int(self.offset[row]))

    def plan(self) -> Plan:
        """What the second pass needs of the kept queries (after :meth:`done` and any
        sampling), in a :class:`Plan`; this scan's arrays are then no longer needed."""
        import numpy as np

        if self.first is None or self.weight is None or self.seen is None:
            raise RuntimeError("Scan.done() was not called")
        if self.offset is None or self.suffix is None or self.ids is None:
            raise RuntimeError("Scan.done() was not called")
        rows = np.flatnonzero(np.frombuffer(self.kept, dtype=np.uint8))
        rows = rows[np.argsort(self.first[rows], kind="stable")]  # reading order
        plan = Plan()
        for start in range(0, len(rows), _PLAN_ROWS):
            part = rows[start : start + _PLAN_ROWS]
            block = np.empty(len(part), dtype=_PLANNED)
            block["first"], block["weight"] = self.first[part], self.weight[part]
            block["seen"], block["offset"] = self.seen[part], self.offset[part]
            block["key"], block["suffix"] = self.table.keys[part], self.suffix[part]
            plan.write(block.tobytes())
        for key, answer in self.production.items():
            row = self.table.row(key)
            if row is not None and self.kept[row]:
                plan.production[int(self.first[row])] = answer
        plan.n = len(rows)
        plan.ids = self.ids
        return plan


def _time(us: int, off: int) -> datetime | None:
    if us == _NO_TIME:
        return None
    tz = UTC if off == 0 else timezone(timedelta(seconds=off))
    return (_EPOCH + us * _US).astimezone(tz)


class Plan:
    """The kept queries as the second pass meets them: for each, in reading order, the number
    of its first record, its merged weight and earliest time, its text hash and its id's suffix
    (40 bytes in an anonymous temporary file, closed, and so deleted, with the plan), and the
    production answers a later record carried (by first record number)."""

    def __init__(self) -> None:
        import weakref

        self._file = tempfile.TemporaryFile(prefix="ragsonde-traffic-")  # noqa: SIM115
        weakref.finalize(self, self._file.close)  # the plan's owner has no close to call
        self.production: dict[int, Production] = {}
        self.n = 0
        self.ids: npt.NDArray[np.uint64] | None = None  # the logged ids' hashes, sorted

    def holds_id(self, query_id: str) -> bool:
        """Whether a logged query (sampled or not) has ``query_id`` (by its hash)."""
        import numpy as np

        if self.ids is None or not len(self.ids):
            return False
        key = np.uint64(_id_key(query_id))
        i = int(np.searchsorted(self.ids, key))
        return i < len(self.ids) and self.ids[i] == key

    def write(self, data: bytes) -> None:
        self._file.write(data)
        self._file.flush()

    def __iter__(self) -> Iterator[tuple[int, int, int, int, int, int]]:
        """Each kept query's ``(first, weight, seen, key, offset, suffix)``, in reading order
        (positional reads: two iterations at once do not disturb each other)."""
        import numpy as np

        size = np.dtype(_PLANNED).itemsize
        fd = self._file.fileno()
        for start in range(0, self.n, _PLAN_ROWS):
            data = os.pread(fd, min(_PLAN_ROWS, self.n - start) * size, start * size)
            yield from np.frombuffer(data, dtype=_PLANNED).tolist()


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


def emit(records: Iterable[TrafficQuery], plan: Plan) -> Iterator[TrafficQuery]:
    """The second pass over the same records: each kept query once, merged, at its first record.

    A record at a planned number whose text is not the one the first pass read there, or files
    that end before the last planned query, mean the files changed between the two passes: a
    VALIDATION_ERROR, rather than queries that are not the traffic's."""
    planned = iter(plan)
    repeats = Repeats(plan.holds_id)
    nxt = next(planned, None)
    for number, record in enumerate(records):
        if nxt is None:
            return
        first, weight, seen, key, offset, n = nxt
        if number != first:
            continue
        if key_of(record.query) != key:
            raise _changed(f"record {number + 1} is not the query read there before")
        qid = record.query_id or query_id_of(record.query)
        record.query_id = repeats.name(qid, n) if n else qid
        record.weight = weight
        record.first_seen = _time(seen, offset)
        if record.production is None:
            record.production = plan.production.get(number)
        yield record
        nxt = next(planned, None)
    if nxt is not None:
        raise _changed("they hold fewer records than when they were first read")


def _changed(why: str) -> QueryValidationError:
    return QueryValidationError(
        f"The traffic files changed while they were read: {why}. Read them again when they "
        "are no longer being written (or copy them first).",
        field="traffic",
    )
