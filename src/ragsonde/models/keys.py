"""Unknown keys in a configuration file are refused, never ignored: a misspelt key silently left
the default in place. The error names the key, where it is, and the closest valid one."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from ragsonde.errors import QueryValidationError

__all__ = ["check_keys", "closest", "unknown_key_message"]


def closest(name: str, valid: Iterable[str]) -> str | None:
    """The valid key most like ``name`` (difflib), or None when none is close."""
    found = difflib.get_close_matches(name, sorted(valid), n=1, cutoff=0.6)
    return found[0] if found else None


def unknown_key_message(
    name: str, valid: Iterable[str], where: str, listed: Iterable[str] | None = None
) -> str:
    """``where: unknown key 'name' (did you mean 'x'?); valid keys: …`` (``listed``, when the
    valid keys include old spellings not worth listing)."""
    valid = sorted(valid)
    guess = closest(name, valid)
    hint = f" (did you mean '{guess}'?)" if guess else ""
    shown = sorted(listed) if listed is not None else valid
    return f"{where}: unknown key '{name}'{hint}; valid keys: {', '.join(shown)}"


def check_keys(
    data: Mapping[str, Any],
    valid: Iterable[str],
    where: str,
    field: str,
    listed: Iterable[str] | None = None,
) -> None:
    """VALIDATION_ERROR (``field``) for the first key of ``data`` not in ``valid``."""
    allowed = set(valid)
    for name in data:
        if name not in allowed:
            message = unknown_key_message(str(name), allowed, where, listed)
            raise QueryValidationError(message, field=f"{field}.{name}")
