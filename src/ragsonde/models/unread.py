"""Payload values of a type their field cannot be read as: what is coerced, what is left unread.

A collection another tool built may keep, where ragsonde reads a chunk's text (``text``, ``url``,
``title``, ``section``, ``created_at``) or a document id, a value of another JSON type. The one
rule, for every surface (query, eval, explain, traffic, tune, the HTTP API, the MCP tools):

================== =============================== ===========================================
found              a text field                    a document id
================== =============================== ===========================================
a string           as it is                        as it is
an integer         its digits (``5`` → ``"5"``)    its digits (``5`` matches ``"5"``)
a decimal number   its text (``1.5`` → ``"1.5"``)  unread
true / false       unread                          unread
a list, an object  unread                          unread
null, or missing   absent (empty text, or null)    absent (the point is no document)
================== =============================== ===========================================

An unread value is never turned into its Python spelling (``"['a', 'b']"``, ``"True"``): the
field reads as absent, the value stays in the result's ``metadata`` as stored, and whoever read
it counts it in an :class:`Unread` tally, which words one warning per (field, path, type found)
with how many times and the first point.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Unread", "id_text", "json_type", "text_of"]

#: How a warning names each JSON type a value may have.
_TYPES = {
    bool: "true/false",
    int: "an integer",
    float: "a decimal number",
    str: "text",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


def json_type(value: Any) -> str:
    """``value``'s JSON type, as a warning names it (``"a list"``, ``"an object"``, …)."""
    name = _TYPES.get(type(value))
    if name is not None:
        return name
    if isinstance(value, bool):
        return _TYPES[bool]
    for kind in (int, float, str, list, dict):
        if isinstance(value, kind):
            return _TYPES[kind]
    return type(value).__name__


def text_of(value: Any) -> str | None:
    """A text field's value as text: a string as it is, a number as its decimal text; ``None``
    for null and for what has no one text (true/false, a list, an object)."""
    if type(value) is str:  # the usual case first
        return value
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int | float):
        return str(value)
    return None


def id_text(value: Any) -> str | None:
    """A document id as text: a string as it is, an integer's digits (a payload may keep a
    numeric id as an integer); ``None`` for null and for every other type, which is no id."""
    if type(value) is str:
        return value
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str | int):
        return str(value)
    return None


@dataclass
class _Seen:
    count: int
    first: str


@dataclass
class Unread:
    """Values left unread, per (field, payload path, type found): how many, the first point."""

    seen: dict[tuple[str, str, str], _Seen] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.seen)

    def add(self, name: str, path: str, value: Any, point: str) -> None:
        """Count ``value``, read at ``path`` as the field ``name`` of point ``point``."""
        key = (name, path, json_type(value))
        seen = self.seen.get(key)
        if seen is None:
            self.seen[key] = _Seen(1, point)
        else:
            seen.count += 1

    def note(self, found: Iterable[tuple[str, str, Any]], point: str) -> None:
        """Count each ``(field, path, value)`` of point ``point`` (``ChunkFields.unread``)."""
        for name, path, value in found:
            self.add(name, path, value, point)

    def merge(self, other: Unread) -> None:
        for key, seen in other.seen.items():
            mine = self.seen.get(key)
            if mine is None:
                self.seen[key] = _Seen(seen.count, seen.first)
            else:
                mine.count += seen.count

    def found(self, what: str = "result") -> list[str]:
        """What was found, one short phrase per (field, path, type): "'text' holds a list in
        3 chunks (the first: point 7)"."""
        return [
            f"'{path}' holds {found} {_where(seen, what)}"
            for (_, path, found), seen in self.seen.items()
        ]

    def warnings(self, what: str = "result") -> list[str]:
        """One line per (field, path, type): what was found, how often, what it reads as, and
        the fix. ``what`` names one reading (``result``, ``point``)."""
        out = []
        for (name, path, found), seen in self.seen.items():
            where = _where(seen, what)
            field_ = f"'{path}'" if path == name else f"'{path}' (the {name})"
            if name == "doc_id":
                out.append(
                    f"payload field {field_} holds {found}, not a document id (text or an "
                    f"integer), {where}: counted as no document. Keep one id per point, or "
                    "read the ids from another field with --field doc_id=PATH."
                )
            else:
                empty = "empty text" if name == "text" else "null"
                out.append(
                    f"payload field {field_} holds {found}, not text, {where}: read as {empty}, "
                    f"the value kept in metadata as stored. To read the {name} from another "
                    f"field: --field {name}=PATH (RAGSONDE_MAPPING__{name.upper()})."
                )
        return out


def _where(seen: _Seen, what: str) -> str:
    return f"in {seen.count} {what}{'s' if seen.count != 1 else ''} (the first: point {seen.first})"
