"""pydantic's validation error as the contract's VALIDATION_ERROR, for every options model.

The workflows' options (evaluate, tune, ingest, …) and the HTTP bodies built of them report a
bad value the same way: each field named with its rule (``k: cutoffs must be positive``), never
a CLI flag, so an HTTP client and a terminal user read the same message.
"""

from __future__ import annotations

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ragsonde.errors import QueryValidationError

__all__ = ["every_error", "first_error", "options_error"]


def options_error(err: ValidationError, prefix: str = "") -> QueryValidationError:
    """pydantic's error as one VALIDATION_ERROR naming each field: ``k: cutoffs must be …``."""
    parts: list[str] = []
    first: str | None = None
    for item in err.errors(include_url=False):
        where = prefix + ".".join(str(p) for p in item["loc"]) if item["loc"] else prefix or "body"
        first = first or where
        msg = str(item["msg"]).removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            msg = "is not a known option"
        # a rule over the whole model names its fields itself: no "body:" before it
        parts.append(f"{where}: {msg}" if item["loc"] or prefix else msg)
    return QueryValidationError("; ".join(parts), field=first)


def first_error(err: ValidationError) -> str:
    """pydantic's first error as ``where: why`` (``the file`` where it is the whole document):
    what a file read back (a saved report, a plan) is refused with."""
    return _where_why(err.errors(include_url=False)[0])


def every_error(err: ValidationError) -> str:
    """pydantic's errors as :func:`first_error` says one, joined by ``; ``."""
    return "; ".join(_where_why(item) for item in err.errors(include_url=False))


def _where_why(item: ErrorDetails) -> str:
    return f"{'.'.join(str(p) for p in item['loc']) or 'the file'}: {item['msg']}"
