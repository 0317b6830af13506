"""The retrieval contract (``CONTRACT.md``) as typed models, and their JSON Schema."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from ragsonde.models.query import (
    DEFAULT_LIMITS,
    BatchRequest,
    FilterValue,
    Limits,
    Query,
    SearchMode,
    parse_query,
    validation_error_from_pydantic,
)
from ragsonde.models.response import (
    MINIMAL_RESULT_FIELDS,
    BatchResponse,
    ErrorInfo,
    Response,
    Result,
    Status,
    Timings,
    utc_now,
)
from ragsonde.models.text import UnicodeStr, check_text, invalid_unicode_at, printable

__all__ = [
    "DEFAULT_LIMITS",
    "MINIMAL_RESULT_FIELDS",
    "BatchRequest",
    "BatchResponse",
    "ErrorInfo",
    "FilterValue",
    "Limits",
    "Query",
    "Response",
    "Result",
    "SearchMode",
    "Status",
    "Timings",
    "UnicodeStr",
    "check_text",
    "invalid_unicode_at",
    "json_schemas",
    "parse_query",
    "printable",
    "utc_now",
    "validation_error_from_pydantic",
]

_SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "Query": Query,
    "BatchRequest": BatchRequest,
    "Result": Result,
    "Response": Response,
    "BatchResponse": BatchResponse,
    "ErrorInfo": ErrorInfo,
}


def json_schemas() -> dict[str, dict[str, Any]]:
    """JSON Schema of every contract model (requests in validation mode, answers as sent)."""
    out: dict[str, dict[str, Any]] = {}
    for name, model in _SCHEMA_MODELS.items():
        mode: Literal["validation", "serialization"] = (
            "validation" if name in {"Query", "BatchRequest"} else "serialization"
        )
        out[name] = model.model_json_schema(mode=mode)
    return out
