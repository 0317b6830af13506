"""pydantic's validation error as the contract's VALIDATION_ERROR, for every options model.

The workflows' options (evaluate, tune, ingest, …) and the HTTP bodies built of them report a
bad value the same way: each field named with its rule (``k: cutoffs must be positive``), never
a CLI flag, so an HTTP client and a terminal user read the same message.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from ragsonde.errors import QueryValidationError

__all__ = [
    "every_error",
    "first_error",
    "id_text",
    "json_integers",
    "json_number",
    "options_error",
    "options_of",
    "shown",
    "validated",
]

_Options = TypeVar("_Options")
_Model = TypeVar("_Model", bound=BaseModel)


def id_text(value: object, name: str) -> str:
    """An id read from a file or a request, as text: ids are text or whole numbers (Qdrant's
    points are UUIDs or unsigned integers; a document's id is its own text). A list, an object,
    a bool or a fraction is a ValueError naming ``name``: read with ``str()``, ``["a"]`` became
    the id "['a']", which matches nothing, without a word."""
    from ragsonde.models.unread import id_text as stored_id  # the one rule of what an id is

    text = stored_id(value)
    if text is not None:
        return text
    raise ValueError(f"{name} is {shown(value)}, not an id (text or a whole number)")


def shown(value: object) -> str:
    """``value`` as a message shows it: its repr, cut at 40 characters (a timestamp of 1e308
    reads from a request's JSON as a 309-digit integer)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def options_of(value: object, kind: type[_Options], name: str = "options") -> _Options:
    """A workflow's options: ``value`` when it is a ``kind``, ``kind()`` when it is None.
    Anything else (a dict, a string) is a VALIDATION_ERROR naming ``name``: it failed later,
    with an AttributeError from deep inside the run."""
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise QueryValidationError(
            f"{name} must be {kind.__name__}(...), not {type(value).__name__} "
            f"(a dict: {kind.__name__}(**d)).",
            field=name,
        )
    return value


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


def validated(model: type[_Model], data: object, refused: str, field: str) -> _Model:
    """``data`` as ``model`` (a file read back: a saved report, a plan), else a VALIDATION_ERROR
    ``{refused}: {where}: {why}`` naming ``field``."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise QueryValidationError(f"{refused}: {first_error(e)}", field=field) from e


def every_error(err: ValidationError) -> str:
    """pydantic's errors as :func:`first_error` says one, joined by ``; ``."""
    return "; ".join(_where_why(item) for item in err.errors(include_url=False))


def _where_why(item: ErrorDetails) -> str:
    return f"{'.'.join(str(p) for p in item['loc']) or 'the file'}: {item['msg']}"


# -- JSON numbers, as JSON Schema reads them ----------------------------------------------------
# The surfaces validate JSON strictly (a ``true`` is no 1, a ``"3"`` no 3), and a strict int
# refuses the float 3.0. JSON Schema's ``integer`` is any number without a fractional part, so
# ``3.0`` is a valid ``top_k`` by the published schema (schemathesis sent ``"grade": 3.0``):
# these read such a number as the integer it is. A float field takes the int as it was.


def json_number(text: str) -> int | float:
    """A JSON number literal with a fraction or an exponent (``json.loads``'s ``parse_float``):
    an int when it has no fractional part (``3.0``, ``1e2``), else the float."""
    number: int | float = json_integers(float(text))
    return number


def json_integers(value: Any) -> Any:
    """``value`` (decoded JSON) with every float that has no fractional part as an int."""
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, list):
        return [json_integers(v) for v in value]
    if isinstance(value, dict):
        return {k: json_integers(v) for k, v in value.items()}
    return value
