"""Read traffic files into one list of distinct queries, and save it as a benchmark.

>>> traffic = read_traffic(["chat.log.jsonl", "traces.otlp.json.gz"], sample=500)  # doctest: +SKIP
>>> write_benchmark(traffic.queries, "traffic.jsonl")                             # doctest: +SKIP

The saved benchmark has unlabelled rows (``query``, ``query_id``, ``weight``, ``first_seen``,
``production``): ``ragsonde judge`` labels them, and ``eval``, ``explain`` and the Judge page
read them like any ragsonde benchmark.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TextIO

from ragsonde.errors import QueryValidationError
from ragsonde.traffic.formats import detect_format
from ragsonde.traffic.logs import read_csv, read_jsonl
from ragsonde.traffic.otlp import read_otlp
from ragsonde.traffic.records import ReadStats, TrafficQuery
from ragsonde.traffic.scan import Plan, emit, sample_scan, scan

__all__ = [
    "READERS",
    "QueryStream",
    "Traffic",
    "TrafficHash",
    "read_traffic",
    "scan_traffic",
    "traffic_hash",
    "write_benchmark",
    "write_rows",
]

#: Format (:func:`~ragsonde.traffic.formats.detect_format`) -> reader of its records.
READERS: dict[str, Callable[[Path, ReadStats], Iterator[TrafficQuery]]] = {
    "jsonl": read_jsonl,
    "csv": read_csv,
    "otlp": read_otlp,
}


class QueryStream:
    """The distinct queries of traffic files, read from the files again on each iteration
    (:func:`~ragsonde.traffic.scan.emit`, beside the first pass's
    :class:`~ragsonde.traffic.scan.Plan`): memory holds one query at a time."""

    def __init__(self, paths: Sequence[Path], plan: Plan) -> None:
        self._paths, self._plan = paths, plan

    def __len__(self) -> int:
        return self._plan.n

    def __iter__(self) -> Iterator[TrafficQuery]:
        records = _records(self._paths, ReadStats())  # counted once, in the first pass
        return emit(records, self._plan)


@dataclass
class Traffic:
    """The distinct queries read, and the account of the reading."""

    queries: Sequence[TrafficQuery] | QueryStream
    stats: ReadStats


def _records(paths: Sequence[Path], stats: ReadStats) -> Iterator[TrafficQuery]:
    for path in paths:
        fmt = detect_format(path)
        stats.files[str(path)] = fmt
        yield from READERS[fmt](path, stats)


def read_traffic(
    paths: Sequence[str | Path],
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> Traffic:
    """Every query of ``paths`` (formats detected from their content), in the window
    ``[since, until)``, duplicates merged, then ``sample`` of them stratified by time; in memory
    (:func:`scan_traffic` streams them).

    A file of another kind, or text that is not UTF-8, is a VALIDATION_ERROR; a record that
    cannot be read is counted in :class:`ReadStats` and the reading goes on. No query at all
    is a VALIDATION_ERROR that says what was skipped."""
    traffic = scan_traffic(paths, since=since, until=until, sample=sample, seed=seed)
    return Traffic(list(traffic.queries), traffic.stats)


def scan_traffic(
    paths: Sequence[str | Path],
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    sample: int | None = None,
    seed: int = 0,
) -> Traffic:
    """:func:`read_traffic`'s queries as a :class:`QueryStream`: the files are read once to
    count, window, merge and sample (:mod:`ragsonde.traffic.scan`), and again on each iteration,
    so memory does not grow with the queries."""
    if not paths:
        raise QueryValidationError("Name at least one traffic file.", field="traffic")
    if sample is not None and sample < 1:
        raise QueryValidationError("sample: must be at least 1.", field="sample")
    if since and until and since >= until:
        raise QueryValidationError("since must be before until.", field="since")
    stats = ReadStats()
    files = [Path(p) for p in paths]
    found = scan(_records(files, stats), stats, since=since, until=until)
    if not len(found):
        raise QueryValidationError(
            f"No query found in {', '.join(str(p) for p in paths)}: "
            f"{stats.records} read, {stats.malformed} malformed, {stats.no_query_text} without "
            f"query text, {stats.outside_window} outside the time window, {stats.other_spans} "
            "spans that are not retrievals"
            + (f" (first: {stats.examples[0]})" if stats.examples else "")
            + ".",
            field="traffic",
        )
    if sample is not None:
        sample_scan(found, sample, seed, stats)
    return Traffic(QueryStream(files, found.plan()), stats)


def benchmark_row(q: TrafficQuery) -> dict[str, object]:
    """One unlabelled benchmark row."""
    row: dict[str, object] = {"query": q.query, "query_id": q.query_id, "weight": q.weight}
    if q.first_seen is not None:
        row["first_seen"] = q.first_seen.isoformat()
    if q.production is not None and q.production.ids:
        # with the settings production logged: read back, the verdict still names them
        settings = q.production.model_dump(include={"top_k", "threshold", "collection", "mode"})
        row["production"] = {
            "ids": q.production.ids,
            "scores": q.production.scores,
            **{k: v for k, v in settings.items() if v is not None},
        }
    return row


def write_benchmark(queries: Iterable[TrafficQuery], path: str | Path) -> Path:
    """``queries`` as a ragsonde JSON Lines benchmark of unlabelled rows."""
    from ragsonde.outputs import open_output

    out = Path(path)
    with open_output(out) as f:  # the old file stays whole until the new one is complete
        write_rows(queries, f)
    return out


def write_rows(queries: Iterable[TrafficQuery], f: TextIO) -> None:
    """``queries`` as benchmark rows (:func:`benchmark_row`), one JSON line each, into ``f``."""
    for q in queries:
        f.write(json.dumps(benchmark_row(q), ensure_ascii=False) + "\n")


class TrafficHash:
    """A hash of the traffic, whatever the order its queries come in: the SHA-256 of the
    sorted 8-byte digests of each query's id, text and weight (8 bytes held a query)."""

    def __init__(self) -> None:
        self._digests = array("Q")

    def add(self, q: TrafficQuery) -> None:
        line = f"{q.query_id}\t{q.query}\t{q.weight}\n".encode()
        digest = hashlib.blake2b(line, digest_size=8).digest()
        self._digests.append(int.from_bytes(digest, "big"))

    def hexdigest(self) -> str:
        import numpy as np

        digests = np.sort(np.frombuffer(self._digests, dtype=np.uint64))  # no list of ints
        return hashlib.sha256(digests.astype(">u8").tobytes()).hexdigest()[:16]


def traffic_hash(queries: Iterable[TrafficQuery]) -> str:
    """A hash of the traffic (each query's id, text and weight): what history records."""
    h = TrafficHash()
    for q in queries:
        h.add(q)
    return h.hexdigest()
