"""The traffic report: label-free health of each query, and what the traffic says as a whole.

A report of many queries keeps only the queries it shows in memory (``queries``: the weakest and
the most asked, :attr:`TrafficReport.complete` False) and every query's row in a spool file
beside it: :meth:`TrafficReport.rows` reads them all back, and :meth:`TrafficReport.write_json`
writes the whole contract, every query in ``queries``, without holding them.

The JSON is a contract for the tools that read it (its JSON Schema is published as
``report.schema.json`` beside this module; ``ragsonde schema traffic`` prints it; regenerate it
with ``python -m ragsonde.traffic.report``). Stable fields: top-level ``n_queries`` and
``weak_share``; ``queries[]``, each with ``query``, ``query_id``, ``predicted`` (0-1, higher is
better), ``weak``, ``signals`` (name -> value) and ``production_agreement`` (where the traffic
carried the ids production returned, else null).
"""

from __future__ import annotations

import contextlib
import json
import os
import weakref
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import TextIO

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from ragsonde.models.params import SearchParams
from ragsonde.models.text import loads_json
from ragsonde.traffic.crossfit import CrossFit
from ragsonde.traffic.records import ReadStats

__all__ = [
    "SCHEMA_FILE",
    "SCHEMA_VERSION",
    "Period",
    "ProductionSummary",
    "QueryHealth",
    "Topic",
    "TrafficReport",
    "flag_reading",
    "read_report",
    "schema_text",
]

SCHEMA_VERSION = "1.1"  # 1.1: flag_reading
SCHEMA_FILE = Path(__file__).with_name("report.schema.json")


class _Part(BaseModel):
    model_config = ConfigDict(extra="forbid")


class QueryHealth(_Part):
    """One distinct query's health."""

    query: str
    query_id: str
    weight: int = Field(description="How many times it was asked.")
    first_seen: str | None = Field(default=None, description="ISO 8601, UTC.")
    predicted: float | None = Field(
        ge=0.0, le=1.0, description="Predicted effectiveness, 0-1, higher is better."
    )
    weak: bool = Field(description="predicted is below the report's weak_below.")
    signals: dict[str, float] = Field(description="Label-free signals, name -> value.")
    production_agreement: float | None = Field(
        default=None,
        description="Overlap of production's returned ids with the replay's, "
        "|P ∩ R| / max(|P|, |R|); null where the traffic had no ids.",
    )
    mismatch: list[str] = Field(
        default_factory=list,
        description="Settings in which production differs from the replay (top_k, threshold, "
        "mode, collection), each with the two values; and 'ids: …' when its documents are "
        "mostly not the replay's, which no logged setting explains.",
    )
    top_ids: list[str] = Field(default_factory=list, description="The replay's top ids.")


class Topic(_Part):
    """A group of weak queries close in embedding space, named by their top terms."""

    name: str
    terms: list[str]
    n_queries: int
    weight: int
    query_ids: list[str]


class Period(_Part):
    """The weak share in one day or week (``period`` is its first day)."""

    period: str
    n_queries: int
    weak_share: float


class ProductionSummary(_Part):
    """Production against replay, over the queries whose traffic carried returned ids."""

    n_queries: int
    mean_agreement: float
    low_agreement: int = Field(description="Queries with agreement below 0.5.")
    explained_by: dict[str, int] = Field(
        description="Setting -> queries in which it differs from the replay's; 'ids': queries "
        "whose production documents are mostly not the replay's, which no logged setting explains."
    )
    verdict: str


class TrafficReport(_Part):
    """``ragsonde traffic``'s report."""

    schema_version: str = SCHEMA_VERSION
    created_at: str
    collection: str
    embedder: str
    search: SearchParams
    files: dict[str, str] = Field(description="Traffic file -> detected format.")
    read: ReadStats
    n_queries: int = Field(description="Distinct queries analysed.")
    n_records: int = Field(description="Queries asked, duplicates counted (sum of weights).")
    weak_below: float = Field(description="A query is weak when predicted is below this.")
    weak_share: float = Field(description="Share of distinct queries that are weak.")
    weak_share_interval: tuple[float, float] = Field(
        description="95% Wilson interval of weak_share."
    )
    weak_share_weighted: float = Field(description="Weak share with each query by its weight.")
    combination: str = Field(description="How predicted was made.")
    flag_reading: str = Field(
        default="",
        description="How far the weak flag can be read as a failure rate, in this search mode "
        "(what it measured on SciFact's human labels, or that it was not measured).",
    )
    crossfit: CrossFit | None = Field(
        default=None, description="When labels were given: what the cross-fitting did."
    )
    calibration_sentences: int = Field(
        description="The collection's own sentences the signals were calibrated on."
    )
    queries: list[QueryHealth]
    weakest: list[str] = Field(description="query_ids of the weakest queries, weakest first.")
    frequent: list[str] = Field(description="query_ids of the most asked queries.")
    frequent_health: float | None = Field(
        description="Mean predicted of the most asked queries, weighted by frequency."
    )
    topics: list[Topic]
    drift: list[Period]
    drift_unit: str = Field(description="day or week.")
    production: ProductionSummary | None = None
    saved_benchmark: str | None = Field(
        default=None, description="Where the traffic was saved as an unlabelled benchmark."
    )
    history_run: int | None = Field(
        default=None, description="The run's id in the history, when it was recorded."
    )
    traffic_hash: str = Field(description="Hash of the traffic (ids, texts, weights).")

    _spool: Path | None = PrivateAttr(default=None)
    _unspool: weakref.finalize[[Path], TrafficReport] | None = PrivateAttr(default=None)

    @property
    def complete(self) -> bool:
        """Whether ``queries`` holds every query (else the spool does: :meth:`rows`)."""
        return self._spool is None

    def spool(self, path: Path) -> None:
        """Every query's row is in ``path`` (JSON, one a line), which is deleted with the
        report (or by :meth:`close`); ``queries`` holds the ones shown."""
        self._spool = path
        self._unspool = weakref.finalize(self, _unlink, path)

    def close(self) -> None:
        """Delete the spool now (a command that is done with the report, or stopped while it
        held it: a SIGTERM ends the process before the report would be collected). The rows
        beyond ``queries`` are gone after it."""
        if self._unspool is not None:
            self._unspool()

    def __enter__(self) -> TrafficReport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def rows(self) -> Iterator[QueryHealth]:
        """Every query's health, in the order read."""
        if self._spool is None:
            yield from self.queries
            return
        with self._spool.open(encoding="utf-8") as f:
            for line in f:
                yield QueryHealth.model_validate_json(line)

    def query(self, query_id: str) -> QueryHealth:
        found = next((q for q in self.queries if q.query_id == query_id), None)
        return found or next(q for q in self.rows() if q.query_id == query_id)

    def write_json(self, out: TextIO) -> None:
        """The report's JSON (the contract: every query in ``queries``) to ``out``: indented,
        with each query's row on a line of its own, streamed from the spool
        (:func:`read_report` reads it back a row at a time)."""
        head, _, tail = (
            self.model_copy(update={"queries": []})
            .model_dump_json(indent=2)
            .partition(_EMPTY_QUERIES)
        )
        out.write(head + _QUERIES_OPEN)
        n = 0
        for n, line in enumerate(self._row_lines(), start=1):
            out.write(("\n    " if n == 1 else ",\n    ") + line)
        out.write(("\n  ]" if n else "]") + tail)

    def _row_lines(self) -> Iterator[str]:
        if self._spool is None:
            for q in self.queries:
                yield q.model_dump_json()
            return
        with self._spool.open(encoding="utf-8") as f:
            for line in f:
                yield line.rstrip("\n")

    def materialised(self) -> TrafficReport:
        """The report with every query in ``queries`` (for a bounded traffic: a server's)."""
        if self._spool is None:
            return self
        whole = self.model_copy(update={"queries": list(self.rows())})
        whole._spool = whole._unspool = None
        return whole


#: How the top-level empty ``queries`` list prints at indent 2 (no string value can hold it
#: unescaped), and how :meth:`TrafficReport.write_json` opens the list.
_EMPTY_QUERIES = '\n  "queries": []'
_QUERIES_OPEN = '\n  "queries": ['


def read_report(path: Path) -> tuple[TrafficReport, Iterator[QueryHealth]]:
    """A saved report's header (``queries`` empty) and an iterator over its rows, read a line at
    a time when the file is laid out as :meth:`TrafficReport.write_json` writes it (else the
    whole file is read at once). Read as every file a user names is
    (:func:`ragsonde.inputs.text_lines`): a regular file, no line over
    :data:`~ragsonde.inputs.MAX_LINE_BYTES`, the header no larger than
    :data:`~ragsonde.inputs.MAX_DOCUMENT_BYTES`. Raises pydantic's ValidationError or ValueError
    (bytes that are not UTF-8 too) for a file that is not a traffic report; OSError when it
    cannot be read."""
    from ragsonde.inputs import MAX_DOCUMENT_BYTES, joined, read_bytes

    head: list[str] = []
    tail: list[str] = []
    rows, size, layout = 0, 0, False
    part = head
    with contextlib.closing(_text_lines(path)) as lines:
        for line in lines:
            if part is head and line.rstrip("\n") == _QUERIES_OPEN.strip("\n"):
                part = tail
                for row in lines:
                    if not row.startswith("    {"):
                        layout = row.startswith("  ]")
                        tail.append(row.replace("  ]", '  "queries": []', 1))
                        break
                    if not row.rstrip().rstrip(",").endswith("}"):
                        break  # an object over several lines: not write_json's layout
                    rows += 1
                continue
            part.append(line)
            size += len(line)
            if size > MAX_DOCUMENT_BYTES:
                break  # no header is this large: read whole below, which states the limit
    if not layout:  # another layout: the whole file, validated as one
        whole = _validated(read_bytes(path, MAX_DOCUMENT_BYTES, "traffic report"))
        return whole.model_copy(update={"queries": []}), iter(whole.queries)
    header = _validated(joined(head + tail))
    return header, _rows_of(path, rows)


def _text_lines(path: Path) -> Generator[str, None, None]:
    """The lines of ``path`` as text (:func:`ragsonde.inputs.text_lines`: bounded, decoded one
    at a time); a ValueError naming the line otherwise."""
    from ragsonde.inputs import text_lines

    for _, text in text_lines(path):
        yield text


def _validated(raw: str | bytes) -> TrafficReport:
    """A traffic report from its JSON text; another ragsonde file (an eval report, a plan: each
    has a ``kind``) or JSON that is no object is a ValueError saying so."""
    data = loads_json(raw)  # a lone surrogate refused here
    if not isinstance(data, dict):
        raise ValueError("it is JSON, but not an object")
    if "kind" in data:
        raise ValueError(
            f"it is a ragsonde {data['kind']} file; a traffic report is what `ragsonde traffic "
            "-o FILE.json` writes"
        )
    return TrafficReport.model_validate(data)


def _rows_of(path: Path, n: int) -> Iterator[QueryHealth]:
    with contextlib.closing(_text_lines(path)) as lines:
        for line in lines:
            if line.rstrip("\n") == _QUERIES_OPEN.strip("\n"):
                break
        for _ in range(n):
            row = next(lines, None)
            if row is None:
                raise ValueError("the file changed while it was read: it has fewer rows now")
            yield QueryHealth.model_validate(loads_json(row.strip().rstrip(",")))


def _unlink(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def schema_text() -> str:
    """The report's JSON Schema, as the published file holds it."""
    schema = TrafficReport.model_json_schema(mode="serialization")
    doc = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
        "title": f"ragsonde traffic report {SCHEMA_VERSION}",
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
    print(f"wrote {SCHEMA_FILE}")


#: What the fixed weak cut (predicted < 0.1) measured on SciFact's 300 test queries against
#: human nDCG@10 < 0.3 (bench/bench_traffic.py, bench/RESULTS.md), by search mode.
_MEASURED = {
    "dense": "marked 21% of the queries where 19% were weak (precision 0.50, recall 0.54)",
    "hybrid": (
        "marked 36% of the queries where 16% were weak (precision 0.35, recall 0.81): it over-flags"
    ),
}


def flag_reading(mode: str, weak_below: float, labelled: bool) -> str:
    """How to read the weak share of a run in ``mode`` at the cut ``weak_below``: a share of
    a third read as "a third of my queries fail" where a sixth did (hybrid), and in sparse mode
    nothing was measured at all."""
    from ragsonde.traffic.predictor import WEAK_BELOW

    if labelled:
        return "The weak cut was set from the labels given (cross-fitted)."
    if weak_below != WEAK_BELOW:
        return (
            f"The weak cut {weak_below:g} was chosen by hand; only the default {WEAK_BELOW:g} "
            "was measured against human labels. Read the order of predicted, not the share."
        )
    measured = _MEASURED.get(mode)
    if measured is None:
        return (
            f"The weak flag was not measured against human labels in {mode} mode: read the "
            "order of predicted (weakest first), not the share as a failure rate."
        )
    advice = (
        "read the order of predicted, not the share as a failure rate"
        if mode != "dense"
        else "a triage list, not a failure rate"
    )
    return f"On SciFact in {mode} mode the weak flag {measured}; {advice}."
