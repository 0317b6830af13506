"""Text at the door: a string is valid Unicode (UTF-8 encodable) or it is refused.

JSON can carry a lone surrogate (``"\\ud800"``) and a POSIX argv carries undecodable bytes as
surrogate escapes (``\\udc80``..``\\udcff``); both are ``str`` to Python but not text: they cannot
be encoded, tokenized or written back out. Every text input is checked once where it enters
(:data:`UnicodeStr` in the contract models, :func:`check_text` elsewhere); what is echoed back
from input that was refused goes through :func:`printable` so an error answer never crashes.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from pydantic import AfterValidator, StrictStr

__all__ = [
    "UnicodeStr",
    "check_json",
    "check_text",
    "invalid_unicode_at",
    "loads_json",
    "printable",
]

_SURROGATE = re.compile("[\ud800-\udfff]")


def invalid_unicode_at(value: str) -> int | None:
    """The index of the first character that is not valid Unicode text (a lone surrogate)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        return e.start
    return None


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
    """``value`` (parsed JSON or YAML) unchanged, or ValueError naming the field (dotted path)
    whose key or text is not valid Unicode: what a file's row carries is checked in one pass."""
    if isinstance(value, str):
        check_text(value, f"field {where}" if where else "the value")
    elif isinstance(value, dict):
        for key, item in value.items():
            name = f"{where}.{key}" if where else str(key)
            if isinstance(key, str):
                check_text(key, f"the key of field {printable(name)}")
            check_json(item, printable(name))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_json(item, f"{where}[{i}]")
    return value


def loads_json(raw: str | bytes) -> Any:
    """``json.loads`` that refuses (ValueError) text JSON can carry but Unicode cannot: a lone
    surrogate escaped as ``"\\udc80"``, in any key or string, naming its field."""
    return check_json(json.loads(raw))


def _check(value: str) -> str:
    return check_text(value)


def printable(value: str) -> str:
    """``value`` with every lone surrogate replaced by U+FFFD, for echoing refused input."""
    return _SURROGATE.sub("\ufffd", value)


#: A strict string that must be valid Unicode (no lone surrogates).
UnicodeStr = Annotated[StrictStr, AfterValidator(_check)]
