"""Text at the door: a string is valid Unicode (UTF-8 encodable) or it is refused.

JSON can carry a lone surrogate (``"\\ud800"``) and a POSIX argv carries undecodable bytes as
surrogate escapes (``\\udc80``..``\\udcff``); both are ``str`` to Python but not text: they cannot
be encoded, tokenized or written back out. Every text input is checked once where it enters
(:data:`UnicodeStr` in the contract models, :func:`check_text` elsewhere, :func:`invalid_text_in`
for a whole parsed JSON document: keys and values, at any depth); what is echoed back
from input that was refused goes through :func:`printable` so an error answer never crashes.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, StrictStr

__all__ = [
    "JsonPath",
    "UnicodeStr",
    "as_location",
    "check_json",
    "check_text",
    "counted",
    "invalid_text_in",
    "invalid_unicode_at",
    "json_for_terminal",
    "loads_json",
    "not_utf8",
    "printable",
    "read_json_file",
    "terminal_safe",
    "terminal_text",
    "unreadable",
]

#: Where a value sits in a JSON document: object keys and array indexes, from the top.
JsonPath = tuple[str | int, ...]

_SURROGATE = re.compile("[\ud800-\udfff]")
#: What a terminal acts on rather than shows: C0 and C1 controls (ESC starts a colour, a title,
#: a cursor move), DEL, and the bidirectional overrides that reorder what follows them.
_TERMINAL_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: The same, less the line breaks and tabs that lay a multi-line text out (what the CLI's
#: console lets through: a snippet keeps its lines, a table cell its tab stops).
_TERMINAL_CONTROL_IN_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: What ``json.dumps(ensure_ascii=False)`` leaves raw that a terminal would act on or that
#: cannot be written as UTF-8 (C0 controls it escapes itself).
_RAW_IN_JSON = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def invalid_unicode_at(value: str) -> int | None:
    """The index of the first character that is not valid Unicode text (a lone surrogate)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        return e.start
    return None


def invalid_text_in(document: Any) -> tuple[JsonPath, str, int] | None:
    """The first string of a parsed JSON document (an object key or a value, at any depth) that
    is not valid Unicode: ``(its path, the string, the bad character's index)``; else None.

    Walks with a stack, not recursion, so a document as deep as the parser allows is walked too;
    each node keeps a link to its parent instead of its whole path (the path is spelt out only
    for the string it reports), and each container is walked once, so a YAML document whose
    aliases repeat one list many times costs its size, not the number of its paths.
    """
    stack: list[tuple[_Link, Any]] = [(None, document)]
    seen: set[int] = set()
    while stack:
        link, value = stack.pop()
        if isinstance(value, str):
            at = invalid_unicode_at(value)
            if at is not None:
                return _spelt(link), value, at
        elif isinstance(value, dict | list):
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, dict):
                for key in value:
                    at = invalid_unicode_at(key) if isinstance(key, str) else None
                    if at is not None:
                        return (*_spelt(link), key), key, at
                stack.extend(((link, key), item) for key, item in reversed(value.items()))
            else:
                stack.extend(((link, i), item) for i, item in reversed(list(enumerate(value))))
    return None


#: A node's way up: its parent's link and its own key or index (None at the top).
_Link = tuple[Any, str | int] | None


def _spelt(link: _Link) -> JsonPath:
    parts: list[str | int] = []
    while link is not None:
        link, key = link
        parts.append(key)
    return tuple(reversed(parts))


def check_text(value: str, what: str = "") -> str:
    """``value`` unchanged, or ValueError naming ``what`` and the position of the bad character."""
    at = invalid_unicode_at(value)
    if at is not None:
        prefix = f"{what} " if what else ""
        raise ValueError(
            f"{prefix}must be valid Unicode text, but character {at} is a lone surrogate "
            f"(U+{ord(value[at]):04X}); send UTF-8"
        )
    return value


def check_json(value: Any, where: str = "") -> Any:
    """``value`` (parsed JSON or YAML) unchanged, or ValueError naming the field (dotted path
    under ``where``) whose key or text is not valid Unicode (:func:`invalid_text_in`)."""
    found = invalid_text_in(value)
    if found is None:
        return value
    path, text, _ = found
    parts = [where]
    for part in path:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            parts.append(f".{part}" if any(parts) else str(part))
    name = printable("".join(parts))
    if path and path[-1] is text:  # the key itself (invalid_text_in ends a key's path with it)
        check_text(text, f"the key of field {name}")
    check_text(text, f"field {name}" if name else "the value")
    return value  # not reached: check_text raised


def loads_json(raw: str | bytes) -> Any:
    """``json.loads`` that refuses (ValueError) text JSON can carry but Unicode cannot: a lone
    surrogate escaped as ``"\\udc80"``, in any key or string, naming its field; and a document
    nested deeper than the parser goes (its RecursionError was a traceback in every reader of
    JSON lines: a benchmark, a corpus, a traffic log)."""
    try:
        return check_json(json.loads(raw))
    except RecursionError:
        raise ValueError("it nests JSON too deeply (arrays or objects within each other)") from None


def unreadable(path: Path) -> str | None:
    """Why ``path`` is no file to read, said plainly before reading it: a folder, no such file,
    a FIFO or a device (:func:`ragsonde.inputs.not_a_file`), an empty file (None: it is one).
    The caller prefixes what it reads."""
    from ragsonde.inputs import not_a_file

    why = not_a_file(path)
    if why is not None:
        return why
    if path.stat().st_size == 0:
        return "it is empty"
    return None


def not_utf8(e: UnicodeDecodeError) -> str:
    """A file's bytes that are not UTF-8, said plainly (not Python's "'utf-8' codec can't
    decode byte 0xff in position 0")."""
    return f"it is not UTF-8 text ({e.reason} at byte {e.start})"


def read_json_file(path: Path) -> Any:
    """The JSON document in the file ``path``, through :func:`loads_json`. Anything else is a
    ValueError whose message says plainly why, for the caller to prefix with what it reads:
    :func:`unreadable`'s reasons, text that is not UTF-8 (:func:`ragsonde.inputs.decoded_text`:
    which line, or UTF-16), text that is not JSON."""
    why = unreadable(path)
    if why is not None:
        raise ValueError(why)
    from ragsonde.inputs import MAX_DOCUMENT_BYTES, decoded_text, read_bytes

    raw = read_bytes(path, MAX_DOCUMENT_BYTES, "JSON document")  # ValueError: said plainly
    if not raw.strip():
        raise ValueError("it is empty")
    text = decoded_text(raw)  # ValueError: said plainly, at its line
    try:
        return loads_json(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"it is not JSON ({e.msg} at line {e.lineno} column {e.colno})") from e


def as_location(value: object, field: str) -> str:
    """A path or URL a library call was given, as text: a ``str``, or an ``os.PathLike`` of
    one (a ``Path``). Anything else (``bytes``: a failure deep in ``pathlib``; a Path: an
    AttributeError where a URL was looked for) is a VALIDATION_ERROR naming ``field``; so is
    an empty one."""
    text = os.fspath(value) if isinstance(value, os.PathLike) else value
    if not isinstance(text, str):
        from ragsonde.errors import QueryValidationError

        raise QueryValidationError(
            f"{field} must be a path or URL as str or Path, not {type(value).__name__}.",
            field=field,
        )
    if not text:  # Path("") is the working folder: `ingest "$DOCS"`, unset, ingested the cwd
        from ragsonde.errors import QueryValidationError

        raise QueryValidationError(
            f"{field} is empty: name a folder, a file or a URL (an unset shell variable?).",
            field=field,
        )
    return text


def _check(value: str) -> str:
    return check_text(value)


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, the noun plural unless ``n`` is 1: ``1 document``, ``2,000 chunks``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def printable(value: str) -> str:
    """``value`` with every lone surrogate replaced by U+FFFD, for echoing refused input."""
    return _SURROGATE.sub("\ufffd", value)


def terminal_safe(value: str) -> str:
    """``value`` to print on a terminal: each control character as a visible escape (``\\x1b``,
    ``\\n``, ``\\u202e``) and each lone surrogate as U+FFFD, so text from a log (anybody's)
    can neither restyle the terminal nor break a table's row."""
    return _TERMINAL_CONTROL.sub(_escaped, printable(value))


def terminal_text(value: str) -> str:
    """:func:`terminal_safe` that keeps line breaks and tabs: what the CLI's console prints of
    any text, whoever wrote it (a stored chunk, a judged query, an error echoing its input)."""
    if _TERMINAL_CONTROL_IN_LINES.search(value) is None and _SURROGATE.search(value) is None:
        return value
    return _TERMINAL_CONTROL_IN_LINES.sub(_escaped, printable(value))


def json_for_terminal(dumped: str) -> str:
    """JSON text (``json.dumps(..., ensure_ascii=False)``) with DEL, C1 controls, the bidi
    overrides and lone surrogates written as ``\\uXXXX`` escapes: the same JSON to a reader
    (they only occur inside strings), nothing a terminal acts on, and encodable as UTF-8."""
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", dumped)


def _escaped(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


#: A strict string that must be valid Unicode (no lone surrogates).
UnicodeStr = Annotated[StrictStr, AfterValidator(_check)]
