"""Traffic files: opened (gzip by its magic bytes), read line by line as UTF-8, and their format
detected from their content, never from their name.

Formats: ``jsonl`` (a query log, one JSON object a line with a ``query`` field), ``csv`` (a
query log with a ``query`` column), ``otlp`` (OTLP JSON traces: one ``{"resourceSpans": …}``
request a line, as the Collector's file exporter writes them, or one such document).
"""

from __future__ import annotations

import gzip
import json
import re
import shlex
import zlib
from collections.abc import Generator
from pathlib import Path
from typing import IO

from ragsonde.errors import QueryValidationError
from ragsonde.inputs import decoded_lines, open_regular, other_encoding

__all__ = ["FORMATS", "QUERY_COLUMNS", "detect_format", "numbered_lines", "open_bytes"]

FORMATS = ("jsonl", "csv", "otlp")
#: Names a query log's query field or column may have, first match wins.
QUERY_COLUMNS = ("query", "query_text", "question", "input", "text")
_PEEK = 64 * 1024
#: Packed files a log is often shipped as, by their first bytes: what each is, how to unpack it.
#: (gzip is read as it is; inside it, a tar archive is told by ``ustar`` at byte 257.)
_PACKED = {
    b"BZh": ("bzip2-compressed", "decompress it first", "bunzip2 -k {}"),
    b"\xfd7zXZ\x00": ("xz-compressed", "decompress it first", "unxz -k {}"),
    b"\x28\xb5\x2f\xfd": ("zstd-compressed", "decompress it first", "unzstd {}"),
    b"\x04\x22\x4d\x18": ("lz4-compressed", "decompress it first", "unlz4 {}"),
    b"PK\x03\x04": ("a zip archive", "extract the log from it first", "unzip {}"),
    b"7z\xbc\xaf\x27\x1c": ("a 7z archive", "extract the log from it first", "7z x {}"),
    b"PAR1": ("a Parquet file", "export it as JSON Lines or CSV first", ""),
    b"%PDF-": ("a PDF document", "write its queries as JSON Lines or CSV first", ""),
}


def bad_file(path: Path, why: str) -> QueryValidationError:
    return QueryValidationError(f"Cannot read traffic file {path}: {why}", field="traffic")


def open_bytes(path: Path) -> IO[bytes]:
    """``path`` opened for reading bytes, decompressed when it is gzip (by its first bytes)."""
    try:  # a FIFO or a device is refused (said what it is), not waited on or read for ever
        f = open_regular(path)
    except ValueError as e:
        raise bad_file(path, str(e)) from e
    try:
        magic = f.read(2)
        f.seek(0)
    except OSError as e:
        f.close()
        raise bad_file(path, e.strerror or str(e)) from e
    if magic == b"\x1f\x8b":
        return _Gunzipped(f)  # type: ignore[return-value]  # a GzipFile is an IO[bytes]
    return f


class _Gunzipped(gzip.GzipFile):
    """A gzip stream over the file ``raw``, which it closes when it is closed (a GzipFile
    given a ``fileobj`` leaves it open)."""

    def __init__(self, raw: IO[bytes]) -> None:
        super().__init__(fileobj=raw, mode="rb")
        self._raw = raw

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._raw.close()


def numbered_lines(path: Path) -> Generator[tuple[int, str], None, None]:
    """``(line number, text)`` of ``path``, decoded as UTF-8 one line at a time: binary data or
    bytes that are not UTF-8 stop the read with a VALIDATION_ERROR naming the line."""
    try:
        with open_bytes(path) as f:  # each line bounded: a gzip bomb is one endless line
            yield from decoded_lines(f)
    except (OSError, EOFError, zlib.error) as e:  # a broken gzip stream
        raise bad_file(path, f"it cannot be read to the end ({e})") from e
    except ValueError as e:  # a line over the limit, binary data, not UTF-8
        raise bad_file(path, str(e)) from e


def _peek(path: Path) -> bytes:
    try:
        with open_bytes(path) as f:
            return f.read(_PEEK)
    except (OSError, EOFError, zlib.error) as e:
        raise bad_file(path, f"it cannot be read ({e})") from e


#: An OTLP request's top-level key, looked for at the start of a first line too long to parse.
_OTLP_KEY = re.compile(r'^\{\s*"(resourceSpans|resource_spans)"\s*:')
_KEY_WITHIN = 256

#: Lines of the first 64 KiB read to tell a JSON Lines log or OTLP JSON by their rows.
_ROWS_READ = 200


def _by_rows(text: str, whole: bool) -> str | None:
    """``jsonl`` or ``otlp`` when a whole line of ``text`` (the file's start) is a JSON object
    with a query field or ``resourceSpans``; None when none is. Reading past the first line
    is what lets a log whose first line is cut or bad be read, that line counted malformed."""
    lines = text.split("\n")
    for line in (lines if whole else lines[:-1])[:_ROWS_READ]:
        if not line.startswith("{"):  # an indented object is inside a document over lines
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if not isinstance(row, dict):
            continue
        if "resourceSpans" in row or "resource_spans" in row:
            return "otlp"
        if any(c in row for c in QUERY_COLUMNS):
            return "jsonl"
    return None


def detect_format(path: Path) -> str:
    """One of :data:`FORMATS`, from what the file holds; VALIDATION_ERROR naming what was
    found when it is none of them."""
    head = _peek(path)
    if not head.strip():
        raise bad_file(path, "it is empty")
    packed = next((v for magic, v in _PACKED.items() if head.startswith(magic)), None)
    if packed is None and head[257:262] == b"ustar":
        packed = ("a tar archive", "extract the log from it first", "tar -xf {}")
    if packed is not None:
        what, how, command = packed
        if command:
            how += f" ({command.format(shlex.quote(str(path)))})"
        text_only = "ragsonde reads traffic as plain or gzip-compressed text"
        raise bad_file(path, f"it is {what}, and {text_only}; {how}")
    encoding = other_encoding(head)  # UTF-16 was read as "binary data"
    if encoding is not None:
        raise bad_file(
            path,
            f"it is {encoding} text, and ragsonde reads UTF-8; convert it first (iconv -f "
            f"{encoding} -t UTF-8 {shlex.quote(str(path))} > log.utf8)",
        )
    if b"\x00" in head:
        raise bad_file(path, "it holds binary data (NUL bytes), not a query log or OTLP JSON")
    text = head.decode("utf-8-sig", errors="replace").lstrip()
    by_rows = _by_rows(text, whole=len(head) < _PEEK)
    if by_rows is not None:
        return by_rows
    if text.startswith(("{", "[")):
        first = text.split("\n", 1)[0]
        try:
            row = json.loads(first)
        except (ValueError, RecursionError):
            row = None  # a document over several lines: only OTLP JSON is read that way
        if text.startswith("[") and (isinstance(row, list) or row is None):
            raise bad_file(
                path,
                "it holds a JSON array; write one JSON object a line (JSON Lines: "
                "jq -c '.[]' FILE > log.jsonl), or OTLP JSON traces",
            )
        if row is None and '"weak_share"' in text and '"n_queries"' in text:
            raise bad_file(
                path,
                "it is a traffic report (what `ragsonde traffic -o` writes); read the traffic "
                "benchmark `--save` writes (JSON Lines), or the logs themselves",
            )
        if isinstance(row, dict) and not ("resourceSpans" in row or "resource_spans" in row):
            return "jsonl"
        if row is None and '"context"' in text and '"trace_id"' in text:
            raise bad_file(
                path,
                "it holds the OpenTelemetry SDK's console spans (OTEL_TRACES_EXPORTER=console), "
                "which are not OTLP JSON; export OTLP instead (OTEL_TRACES_EXPORTER=otlp to a "
                "Collector whose file exporter writes the file)",
            )
        if row is None and "\n" not in text and len(head) == _PEEK and text.startswith("{"):
            # a first line over 64 KiB: read as lines, each counted if bad; a Collector's
            # request of many spans is one (it was read as a query log: all "no query text")
            return "otlp" if _OTLP_KEY.search(text[:_KEY_WITHIN]) else "jsonl"
        if row is None and not ('"resourceSpans"' in text or '"resource_spans"' in text):
            raise bad_file(
                path,
                "it holds JSON that is neither a query log (one object a line with a "
                '"query" field) nor OTLP JSON traces ("resourceSpans")',
            )
        return "otlp"
    if any(c < " " and c not in "\t\r\n" for c in text[:4096]):
        raise bad_file(path, "it holds control characters: binary data, not text")
    return "csv"
