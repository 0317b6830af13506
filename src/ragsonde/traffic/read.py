"""Read traffic files into one list of distinct queries, and save it as a benchmark.

>>> traffic = read_traffic(["chat.log.jsonl", "traces.otlp.json.gz"], sample=500)  # doctest: +SKIP
>>> write_benchmark(traffic.queries, "traffic.jsonl")                             # doctest: +SKIP

The saved benchmark has unlabelled rows (``query``, ``query_id``, ``weight``, ``first_seen``,
``production``): ``ragsonde judge`` labels them, and ``eval``, ``explain`` and the Judge page
read them like any ragsonde benchmark.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ragsonde.errors import QueryValidationError
from ragsonde.traffic.formats import detect_format
from ragsonde.traffic.logs import read_csv, read_jsonl
from ragsonde.traffic.otlp import read_otlp
from ragsonde.traffic.records import ReadStats, TrafficQuery
from ragsonde.traffic.shape import merge, sample_by_time

__all__ = ["READERS", "Traffic", "read_traffic", "traffic_hash", "write_benchmark"]

#: Format (:func:`~ragsonde.traffic.formats.detect_format`) -> reader of its records.
READERS: dict[str, Callable[[Path, ReadStats], Iterator[TrafficQuery]]] = {
    "jsonl": read_jsonl,
    "csv": read_csv,
    "otlp": read_otlp,
}


@dataclass
class Traffic:
    """The distinct queries read, and the account of the reading."""

    queries: list[TrafficQuery]
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
    ``[since, until)``, duplicates merged, then ``sample`` of them stratified by time.

    A file of another kind, or text that is not UTF-8, is a VALIDATION_ERROR; a record that
    cannot be read is counted in :class:`ReadStats` and the reading goes on. No query at all
    is a VALIDATION_ERROR that says what was skipped."""
    if not paths:
        raise QueryValidationError("Name at least one traffic file.", field="traffic")
    if sample is not None and sample < 1:
        raise QueryValidationError("sample: must be at least 1.", field="sample")
    if since and until and since >= until:
        raise QueryValidationError("since must be before until.", field="since")
    stats = ReadStats()
    queries = merge(_records([Path(p) for p in paths], stats), stats, since=since, until=until)
    if not queries:
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
        queries = sample_by_time(queries, sample, seed, stats)
    return Traffic(queries, stats)


def benchmark_row(q: TrafficQuery) -> dict[str, object]:
    """One unlabelled benchmark row."""
    row: dict[str, object] = {"query": q.query, "query_id": q.query_id, "weight": q.weight}
    if q.first_seen is not None:
        row["first_seen"] = q.first_seen.isoformat()
    if q.production is not None and q.production.ids:
        row["production"] = {"ids": q.production.ids, "scores": q.production.scores}
    return row


def write_benchmark(queries: Sequence[TrafficQuery], path: str | Path) -> Path:
    """``queries`` as a ragsonde JSON Lines benchmark of unlabelled rows."""
    out = Path(path)
    try:
        with out.open("w", encoding="utf-8") as f:
            for q in queries:
                f.write(json.dumps(benchmark_row(q), ensure_ascii=False) + "\n")
    except OSError as e:
        raise QueryValidationError(
            f"Cannot write the traffic benchmark {out}: {e.strerror or e}", field="save"
        ) from e
    return out


def traffic_hash(queries: Sequence[TrafficQuery]) -> str:
    """A hash of the traffic (each query's id, text and weight): what history records."""
    import hashlib

    h = hashlib.sha256()
    for q in sorted(queries, key=lambda q: q.query_id):
        h.update(f"{q.query_id}\t{q.query}\t{q.weight}\n".encode())
    return h.hexdigest()[:16]
