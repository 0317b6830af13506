"""Query logs: JSON Lines or CSV, one query a row.

A row has the query in a ``query`` field or column (or ``query_text``, ``question``, ``input``,
``text``), and optionally ``query_id``, ``timestamp`` (ISO 8601, or seconds since the epoch),
``session``, ``weight`` (a count, for a log of distinct queries; ``first_seen`` is read as the
timestamp, so a saved traffic benchmark reads back), and what production returned: ``ids`` and
``scores`` (JSON lists; in a CSV also ``a|b|c``), ``top_k``, ``threshold``, ``collection``,
``mode``. A row that cannot be read is counted (``malformed``), one without query text too
(``no_query_text``); neither stops the read.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator, Mapping
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragsonde.models.text import invalid_unicode_at
from ragsonde.models.validation import id_text, shown
from ragsonde.traffic.formats import QUERY_COLUMNS, bad_file, numbered_lines
from ragsonde.traffic.records import Production, ReadStats, TrafficQuery

__all__ = [
    "RowError",
    "number",
    "optional_text",
    "parse_time",
    "production_of",
    "read_csv",
    "read_jsonl",
    "returned_id",
    "row_query",
    "text_field",
]


class RowError(ValueError):
    """A row that cannot be read; the message says why."""


def number(value: Any, cast: type[int] | type[float], name: str) -> Any:
    """A production field's number, None when the row or span has none; one that is there but
    is no finite number is a RowError (the row is counted malformed): read as absent, a
    production ``top_k`` of "ten" would hide the mismatch it explains, and a NaN score would
    be averaged."""
    if value in (None, ""):
        return None
    if isinstance(value, bool):
        raise RowError(f"its {name} is {value!r}, not a number")
    if cast is int and isinstance(value, float):  # int(2.5) would be 2, without a word
        if not value.is_integer():
            raise RowError(f"its {name} is {shown(value)}, not a whole number")
        value = int(value)
    try:
        found = cast(value)
    except (TypeError, ValueError, OverflowError):
        raise RowError(f"its {name} is {shown(value)}, not a {_KIND[cast]}") from None
    if isinstance(found, float) and not math.isfinite(found):
        raise RowError(f"its {name} is {shown(value)}, not a finite number")
    return found


_KIND: dict[type, str] = {int: "whole number", float: "number"}


def returned_id(value: Any, name: str) -> str:
    """A returned point's id as text (:func:`text_field`), a RowError for one that is none."""
    return text_field(value, name)


def text_field(value: Any, name: str) -> str:
    """A text field of a row or span (an id, a session, a collection, a mode) as text: text or
    a whole number, valid Unicode. A lone surrogate in one failed later, with a traceback (the
    id's hash, the saved benchmark); an object was kept as its Python repr."""
    try:
        found = id_text(value, f"its {name}")
    except ValueError as e:
        raise RowError(str(e)) from None
    if invalid_unicode_at(found) is not None:
        raise RowError(f"its {name} is not valid Unicode text (a lone surrogate)")
    return found


def optional_text(value: Any, name: str) -> str | None:
    """:func:`text_field`, None when the row or span has none."""
    return None if value in (None, "") else text_field(value, name)


#: The largest number taken as epoch seconds (year 5138); above it, ms, µs, then ns.
_MAX_EPOCH_SECONDS = 1e11


def parse_time(value: Any) -> datetime | None:
    """An ISO 8601 string or epoch seconds (milli-, micro-, nanoseconds by size) -> aware UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise RowError(f"timestamp {value!r} is not a time")
    if isinstance(value, int | float) or (isinstance(value, str) and _is_number(value)):
        number = float(value)
        if not math.isfinite(number):
            raise RowError(f"timestamp {shown(value)} is not a time")
        for _ in range(3):  # ms, µs, ns since the epoch: no further
            if abs(number) <= _MAX_EPOCH_SECONDS:
                break
            number /= 1000.0
        if abs(number) > _MAX_EPOCH_SECONDS:  # 1e300 was read as 2001-09-09
            raise RowError(f"timestamp {shown(value)} is too large for epoch s, ms, µs or ns")
        try:
            return datetime.fromtimestamp(number, tz=UTC)
        except (ValueError, OverflowError, OSError):  # NaN, or a year out of range
            raise RowError(f"timestamp {shown(value)} is not a time") from None
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise RowError(
                f"timestamp {shown(value)} is neither ISO 8601 nor epoch seconds"
            ) from None
        parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
        try:  # 0001-01-01T00:00+14:00 is a year 0 in UTC: an OverflowError after the read
            parsed.astimezone(UTC)
        except OverflowError:
            raise RowError(f"timestamp {shown(value)} is out of range in UTC") from None
        return parsed
    raise RowError(f"timestamp {shown(value)} is not a time")


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


#: The most times one log row may say its query was asked (a row over it is malformed).
MAX_WEIGHT = 10**9


def _weight(value: Any) -> int:
    weight = number(value, int, "weight")
    if weight is None:
        return 1
    if weight < 1:
        raise RowError(f"its weight is {weight}, below 1")
    if weight > MAX_WEIGHT:
        raise RowError(f"its weight is {weight}, over {MAX_WEIGHT:,}, the most one row may count")
    return int(weight)


def _list(value: Any, what: str) -> list[Any] | None:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except ValueError:
                raise RowError(f"{what} is not a JSON list") from None
        else:
            value = [v for v in text.replace(",", "|").split("|") if v.strip()]
    if not isinstance(value, list):
        raise RowError(f"{what} must be a list")
    return value


def production_of(
    ids: list[Any] | None,
    scores: list[Any] | None,
    top_k: Any = None,
    threshold: Any = None,
    collection: Any = None,
    mode: Any = None,
) -> Production:
    """What production returned, each field checked (a :class:`RowError` says which is wrong):
    ids text or whole numbers, scores finite numbers, one score per id when both are logged,
    ``top_k`` a whole number of at least 1, ``threshold`` a finite number."""
    if ids is not None and scores is not None and len(ids) != len(scores):
        raise RowError(
            f"it logs {len(ids)} returned ids and {len(scores)} scores: each id needs its score"
        )
    k = number(top_k, int, "top_k")
    if k is not None and k < 1:
        raise RowError(f"its top_k is {k}, below 1")
    return Production(
        ids=[returned_id(v, f"ids[{i}]") for i, v in enumerate(ids or [])],
        scores=(
            [number(v, float, f"scores[{i}]") for i, v in enumerate(scores)]
            if scores is not None
            else None
        ),
        top_k=k,
        threshold=number(threshold, float, "threshold"),
        collection=optional_text(collection, "collection"),
        mode=optional_text(mode, "mode"),
    )


def _production(row: Mapping[str, Any]) -> Production | None:
    nested = row.get("production")
    if isinstance(nested, dict):  # a saved traffic benchmark's row
        row = nested
    ids = _list(row.get("ids"), "ids")
    scores = _list(row.get("scores"), "scores")
    extra = {k: row.get(k) for k in ("top_k", "threshold", "collection", "mode")}
    if ids is None and scores is None and all(v in (None, "") for v in extra.values()):
        return None
    if scores is not None and any(v is None for v in scores):
        raise RowError("its scores hold a null: log every returned id's score, or none")
    return production_of(ids, scores, **extra)


def row_query(row: Mapping[str, Any], where: str, stats: ReadStats) -> TrafficQuery | None:
    """One log row as a query, or None (counted in ``stats``) when it cannot be one."""
    text = next((row[c] for c in QUERY_COLUMNS if row.get(c) not in (None, "")), None)
    if text is None or (isinstance(text, str) and not text.strip()):
        stats.skip("no_query_text", where, "no query text")
        return None
    if not isinstance(text, str):
        stats.skip("malformed", where, f"the query must be text, not {type(text).__name__}")
        return None
    if invalid_unicode_at(text) is not None:
        stats.skip("malformed", where, "the query is not valid Unicode text")
        return None
    try:
        return TrafficQuery(
            query=text.strip(),
            query_id=optional_text(row.get("query_id"), "query_id") or "",
            first_seen=parse_time(row.get("timestamp", row.get("first_seen"))),
            weight=_weight(row.get("weight")),
            session=optional_text(row.get("session"), "session"),
            production=_production(row),
            source=where,
        )
    except RowError as e:
        stats.skip("malformed", where, str(e))
        return None


def read_jsonl(path: Path, stats: ReadStats) -> Iterator[TrafficQuery]:
    """A JSON Lines query log, row by row."""
    for n, line in numbered_lines(path):
        if not line.strip():
            continue
        where = f"{path.name}:{n}"
        try:
            row = json.loads(line)
        except ValueError as e:
            stats.skip("malformed", where, f"not JSON ({e})")
            continue
        except RecursionError:
            stats.skip("malformed", where, "not JSON ragsonde reads: it nests too deeply")
            continue
        if not isinstance(row, dict):
            stats.skip("malformed", where, "not a JSON object")
            continue
        found = row_query(row, where, stats)
        if found is not None:
            yield found


def read_csv(path: Path, stats: ReadStats) -> Iterator[TrafficQuery]:
    """A CSV query log with a header row naming a query column."""
    last = [0]  # the number of the line the reader took last (its line_num lags on an error)

    def numbered() -> Iterator[str]:
        for last[0], line in numbered_lines(path):
            yield line

    lines = numbered()
    try:  # the delimiter only: sniffed from a header line, doublequote was False, and the
        # standard CSV of csv.writer, Excel and pandas ("" inside a quoted field) misread
        delimiter = csv.Sniffer().sniff(_first(path), delimiters=",;\t").delimiter
    except csv.Error:
        delimiter = ","
    reader = csv.DictReader(lines, dialect=csv.excel, delimiter=delimiter)
    try:
        header = _header([h.strip() for h in reader.fieldnames or []])
    except csv.Error as e:  # a header field over csv's 131,072-character limit, a stray quote
        raise bad_file(path, f"its first line is not a CSV header ({e})") from e
    if not any(h in QUERY_COLUMNS for h in header):
        raise bad_file(
            path,
            f"it reads as CSV with columns {', '.join(header) or '(none)'}, and none is a query "
            f"column (name one {', '.join(QUERY_COLUMNS)})",
        )
    reader.fieldnames = header
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as e:  # a field over csv's 131,072-character limit, a stray quote
            stats.skip("malformed", f"{path.name}:{last[0]}", f"not a CSV row ({e})")
            continue
        where = f"{path.name}:{reader.line_num}"
        if None in row:  # more cells than the header names
            stats.skip("malformed", where, "more cells than the header has columns")
            continue
        found = row_query(row, where, stats)
        if found is not None:
            yield found


#: The columns a log row is read by: a CSV header names them in any case.
_COLUMNS = (
    *QUERY_COLUMNS,
    *("query_id", "timestamp", "first_seen", "weight", "session", "production"),
    *("ids", "scores", "top_k", "threshold", "collection", "mode"),
)


def _header(names: list[str]) -> list[str]:
    """A CSV header with the columns ragsonde reads named as it reads them: a spreadsheet's
    ``Query`` or ``QUESTION`` column was refused as "none is a query column". A name that would
    then be there twice (``query`` and ``Query``) is left as it is."""
    lowered = [n.lower() if n.lower() in _COLUMNS else n for n in names]
    return [low if lowered.count(low) == 1 else n for n, low in zip(names, lowered, strict=True)]


def _first(path: Path) -> str:
    with closing(numbered_lines(path)) as lines:
        return next((line for _, line in lines if line.strip()), "")
