"""Shaping the traffic: a time window, duplicates merged with their count as a weight, and a
sample stratified by time.

Merging keeps one entry per distinct normalised text (case folded, white space collapsed): the
memory held grows with the distinct queries, not with the records read.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterable
from datetime import datetime

from ragsonde.traffic.records import ReadStats, TrafficQuery

__all__ = [
    "Repeats",
    "day_of",
    "merge",
    "normalise",
    "query_id_of",
    "sample_by_time",
    "stratified",
]


def normalise(text: str) -> str:
    """The text duplicates are found by: case folded, runs of white space made one space."""
    return " ".join(text.casefold().split())


def query_id_of(text: str) -> str:
    """A stable id for a query the log gave none: ``t-`` and 12 hex digits of its text's hash."""
    return "t-" + hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()[:12]


def _earlier(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None or b is None:
        return a or b
    return min(a, b)


def merge(
    records: Iterable[TrafficQuery],
    stats: ReadStats,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[TrafficQuery]:
    """Records inside ``[since, until)`` merged by normalised text, in order of first reading.

    A merged query's ``weight`` is how many records it stands for, ``first_seen`` the earliest
    of their times; the first record's id, session and production answer are kept (a later one
    fills in what the first lacks)."""
    merged: dict[str, TrafficQuery] = {}
    for record in records:
        stats.records += 1
        t = record.first_seen
        if t is not None and ((since and t < since) or (until and t >= until)):
            stats.outside_window += 1
            continue
        if t is None and (since or until):
            stats.outside_window += 1  # a window asked for, and this record has no time
            continue
        key = normalise(record.query)
        seen = merged.get(key)
        if seen is None:
            if not record.query_id:
                record.query_id = query_id_of(record.query)
            merged[key] = record
            continue
        stats.duplicates_merged += 1
        seen.weight += record.weight
        seen.first_seen = _earlier(seen.first_seen, t)
        if seen.production is None:
            seen.production = record.production
    out = list(merged.values())
    given = {q.query_id for q in out}
    repeats = Repeats(given.__contains__)
    ids: dict[str, int] = {}
    for q in out:  # two texts logged under one id: the id stays unique
        n = ids.get(q.query_id, 0)
        ids[q.query_id] = n + 1
        if n:
            q.query_id = repeats.name(q.query_id, n)
    return out


class Repeats:
    """The ids of the texts logged under an id another text holds: the ``n``-th repeat of
    ``x`` is ``x-<m>``, ``m`` the ``n``-th number from 2 whose ``x-<m>`` is no logged id
    (``given``). A plain ``x-<n + 1>`` was the id of another logged query (``x``, ``x``,
    ``x-2``: two ``x-2``, a crash in the report's heaps, and a saved benchmark ``eval`` refused).
    Two repeats' ids never meet: each ends in its own id's numbers. One per read, fed each id's
    repeats in reading order (it remembers where each id's numbering stopped)."""

    def __init__(self, given: Callable[[str], bool]) -> None:
        self._given = given
        self._last: dict[str, tuple[int, int]] = {}

    def name(self, query_id: str, n: int) -> str:
        done, m = self._last.get(query_id, (0, 1))
        if n <= done:  # asked again or out of order: count from the start
            done, m = 0, 1
        while done < n:
            m += 1
            if not self._given(f"{query_id}-{m}"):
                done += 1
        self._last[query_id] = (done, m)
        return f"{query_id}-{m}"


def stratified(days: list[str], n: int, seed: int) -> set[int]:
    """The indices of ``n`` of ``days``' items drawn without replacement, stratified by day:
    each day gets its share of ``n`` by its number of items (largest remainders); ``""`` (no
    time) is a stratum of its own. Deterministic for a ``seed``."""
    strata: dict[str, list[int]] = {}
    for i, day in enumerate(days):
        strata.setdefault(day, []).append(i)
    total = len(days)
    quotas = {day: n * len(idx) / total for day, idx in strata.items()}
    alloc = {day: int(quota) for day, quota in quotas.items()}
    left = n - sum(alloc.values())
    rng = random.Random(seed)  # noqa: S311 - a reproducible sample, not a secret
    # remainders that tie (every day's, when n is below the number of days) are broken by the
    # seed: broken by date, a sample of 10 from 30 days took the first 10 days for every seed
    ties = sorted(quotas)
    rng.shuffle(ties)
    order = {day: i for i, day in enumerate(ties)}
    for day in sorted(quotas, key=lambda d: (alloc[d] - quotas[d], order[d]))[:left]:
        alloc[day] += 1
    keep: set[int] = set()
    for day in sorted(strata):
        keep.update(rng.sample(strata[day], alloc[day]))
    return keep


def day_of(first_seen: datetime | None) -> str:
    """The stratum of a query first seen then: its day (UTC), or ``""`` without a time."""
    return first_seen.date().isoformat() if first_seen else ""


def sample_by_time(
    queries: list[TrafficQuery], n: int, seed: int, stats: ReadStats
) -> list[TrafficQuery]:
    """``n`` queries drawn without replacement, stratified by day (UTC) of ``first_seen``
    (:func:`stratified`). Deterministic for a ``seed``; the input order is kept."""
    if n >= len(queries):
        return queries
    keep = stratified([day_of(q.first_seen) for q in queries], n, seed)
    stats.sampled_out += len(queries) - len(keep)
    return [q for i, q in enumerate(queries) if i in keep]
