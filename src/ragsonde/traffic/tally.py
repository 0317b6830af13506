"""What the traffic report says as a whole, gathered one query at a time in bounded memory.

A :class:`Tally` sees each query's health once (:meth:`Tally.add`) and keeps only: counts and
sums, the weak share per day, the :data:`SHOWN` weakest and most frequent queries (two bounded
heaps), the first example of each production mismatch, the terms' document counts (16 bytes a
term in numpy arrays: they grow with the vocabulary, not the queries), and a reservoir of at
most :data:`TOPIC_SAMPLE` weak queries' embeddings for the topics. The per-query rows
themselves go to the caller's spool.

Each view is computed as :mod:`ragsonde.traffic.views` computes it over the whole list; the
topics are computed on the reservoir, which is every weak query up to :data:`TOPIC_SAMPLE`.
"""

from __future__ import annotations

import heapq
import random
from collections import Counter
from datetime import date, datetime, timedelta
from typing import Any, NamedTuple

from ragsonde.traffic.report import Period, ProductionSummary, QueryHealth, Topic
from ragsonde.traffic.table import HashCounts
from ragsonde.traffic.views import OTHER_IDS, production_verdict, query_terms, topics, wilson

__all__ = ["SHOWN", "TOPIC_SAMPLE", "Tally"]

#: Queries listed as the weakest, and as the most frequent.
SHOWN = 20
#: Weak queries whose embeddings the topics are clustered from (a uniform sample beyond).
TOPIC_SAMPLE = 2000


class Tally:
    """The report's aggregates over the queries added so far."""

    def __init__(self, *, seed: int = 0) -> None:
        self.n = self.n_weak = self.weight = self.weak_weight = 0
        self.predicted_sum, self.n_predicted = 0.0, 0
        self._seq = 0
        self._weakest: list[tuple[float, int, int, QueryHealth]] = []  # max-heap by negation
        self._frequent: list[tuple[int, _Desc, QueryHealth]] = []
        self._days: dict[date, list[int]] = {}
        self._first: datetime | None = None
        self._last: datetime | None = None
        self._prod_n, self._prod_sum, self._prod_low = 0, 0.0, 0
        self._explained: Counter[str] = Counter()
        self._example: dict[str, str] = {}
        self.terms = HashCounts()  # hash of a term -> queries holding it
        self._weak: list[tuple[int, _Weak, Any]] = []
        self._weak_seen = 0
        self._rng = random.Random(seed)  # noqa: S311 - a reproducible sample, not a secret

    def add(self, row: QueryHealth, vector: Any | None) -> None:
        """Count ``row``; ``vector``: its embedding, kept (in the reservoir) when it is weak."""
        seq = self._seq
        self._seq += 1
        self.n += 1
        self.weight += row.weight
        if row.weak:
            self.n_weak += 1
            self.weak_weight += row.weight
        if row.predicted is not None:
            self.predicted_sum += row.predicted
            self.n_predicted += 1
            item = (-row.predicted, row.weight, -seq, row)  # the largest of the kept goes first
            _push_bounded(self._weakest, item)
        _push_bounded(self._frequent, (row.weight, _Desc(row.query_id), row))
        self.terms.add(_term_key(t) for t in query_terms(row.query))
        if row.first_seen:
            t = datetime.fromisoformat(row.first_seen)
            self._first = t if self._first is None else min(self._first, t)
            self._last = t if self._last is None else max(self._last, t)
            counts = self._days.setdefault(t.date(), [0, 0])
            counts[0] += 1
            counts[1] += row.weak
        if row.production_agreement is not None:
            self._prod_n += 1
            self._prod_sum += row.production_agreement
            self._prod_low += row.production_agreement < 0.5
            for m in row.mismatch:
                setting = m.split(":", 1)[0]
                self._explained[setting] += 1
                self._example.setdefault(setting, m)
        if vector is not None and row.weak:
            self._reservoir(seq, row, vector)

    def _reservoir(self, seq: int, row: QueryHealth, vector: Any) -> None:
        import numpy as np

        vector = np.asarray(vector, dtype=np.float32)  # the model's precision, a quarter of a list
        kept = _Weak(row.query, row.query_id, row.weight)  # what a topic reads, not the signals
        self._weak_seen += 1
        if len(self._weak) < TOPIC_SAMPLE:
            self._weak.append((seq, kept, vector))
            return
        j = self._rng.randrange(self._weak_seen)
        if j < TOPIC_SAMPLE:
            self._weak[j] = (seq, kept, vector)

    def weakest(self) -> list[QueryHealth]:
        """The :data:`SHOWN` lowest predicted, weakest first (ties: the most asked, then the
        first read)."""
        return [r for *_, r in sorted(self._weakest, key=lambda t: (-t[0], -t[1], -t[2]))]

    def frequent(self) -> list[QueryHealth]:
        """The :data:`SHOWN` most asked (ties: by query_id)."""
        return [r for _, _, r in sorted(self._frequent, key=lambda t: (-t[0], t[2].query_id))]

    def drift(self) -> tuple[list[Period], str]:
        """The weak share per day, or per week (from Monday) when the traffic spans more than
        60 days (as :func:`~ragsonde.traffic.views.drift`)."""
        if self._first is None or self._last is None:
            return [], "day"
        unit = "week" if self._last - self._first > timedelta(days=60) else "day"
        groups: dict[str, list[int]] = {}
        for day, (n, weak) in self._days.items():
            key = day - timedelta(days=day.weekday()) if unit == "week" else day
            g = groups.setdefault(key.isoformat(), [0, 0])
            g[0] += n
            g[1] += weak
        periods = [
            Period(period=p, n_queries=n, weak_share=round(weak / n, 4))
            for p, (n, weak) in sorted(groups.items())
        ]
        return periods, unit

    def production(self) -> ProductionSummary | None:
        """As :func:`~ragsonde.traffic.views.production_summary`."""
        if not self._prod_n:
            return None
        mean = self._prod_sum / self._prod_n
        settings = [s for s, _ in self._explained.most_common() if s != OTHER_IDS]
        example = self._example[settings[0]] if settings else None
        return ProductionSummary(
            n_queries=self._prod_n,
            mean_agreement=round(mean, 4),
            low_agreement=self._prod_low,
            explained_by=dict(self._explained),
            verdict=production_verdict(self._explained, example, self._prod_n, mean),
        )

    def topics(self) -> list[Topic]:
        """Topics of the weak queries in the reservoir (in the order they were read)."""
        weak = [(row, vector) for _, row, vector in sorted(self._weak, key=lambda t: t[0])]
        return topics(weak, lambda t: self.terms.count(_term_key(t)), self.n)

    def share(self) -> tuple[float, tuple[float, float], float]:
        """The weak share, its 95% interval, and the weak share by frequency."""
        return (
            round(self.n_weak / self.n, 4) if self.n else 0.0,
            wilson(self.n_weak, self.n),
            round(self.weak_weight / self.weight, 4) if self.weight else 0.0,
        )


class _Weak(NamedTuple):
    """A weak query in the topics' reservoir: what a topic reads of it (a whole row, with its
    signals, is ten times the size)."""

    query: str
    query_id: str
    weight: int


def _term_key(term: str) -> int:
    """The 64-bit key a term is counted by (Python's string hash: stable within the process,
    which is as long as a tally lives)."""
    return hash(term) & 0xFFFF_FFFF_FFFF_FFFF


class _Desc:
    """A string that orders backwards (a min-heap of (weight, _Desc(id)) drops the least asked,
    then the largest id: it keeps what sorting by (-weight, id) lists first)."""

    __slots__ = ("s",)

    def __init__(self, s: str) -> None:
        self.s = s

    def __lt__(self, other: _Desc) -> bool:
        return self.s > other.s

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Desc) and self.s == other.s

    def __hash__(self) -> int:
        return hash(self.s)


def _push_bounded(heap: list[Any], item: Any) -> None:
    """Keep the :data:`SHOWN` largest items of ``heap`` (a min-heap)."""
    if len(heap) < SHOWN:
        heapq.heappush(heap, item)
    elif heap[0] < item:
        heapq.heapreplace(heap, item)
