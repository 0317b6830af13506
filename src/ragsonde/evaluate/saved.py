"""A saved eval report read back (``eval --save``, ``compare``, the server's saved reports):
every file that is not one is a VALIDATION_ERROR naming what is wrong with it."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.report import EvalReport, check_schema_version
from ragsonde.models.text import read_json_file
from ragsonde.models.validation import validated

__all__ = ["load_report"]


def load_report(path: Path) -> EvalReport:
    """A report saved with ``ragsonde eval --save``; anything else is a VALIDATION_ERROR."""
    try:
        data = read_json_file(path)  # a lone surrogate refused here
    except ValueError as e:
        raise QueryValidationError(f"cannot read report {path}: {e}", field="report") from e
    if not isinstance(data, dict):
        raise QueryValidationError(f"{path} is not a saved report (a JSON object).", field="report")
    check_schema_version(data, str(path))
    if data.get("kind") == "versus" or {"a", "b", "comparison"} <= data.keys():
        raise QueryValidationError(
            f"{path} holds two reports (eval --versus); its comparison is in 'comparison'.",
            field="report",
        )
    if not isinstance(data.get("per_query"), dict) or not data["per_query"]:
        raise QueryValidationError(
            f"report {path} has no per-query results ('per_query'); save it with "
            "`ragsonde eval … --save report.json`.",
            field="per_query",
        )
    where = _non_finite_in(data["per_query"])
    if where is not None:  # compare's statistics said only "y must be finite numbers"
        raise QueryValidationError(
            f"{path}: per_query.{where} is not a finite number (NaN or Infinity): not a report "
            "ragsonde saved.",
            field="report",
        )
    return validated(EvalReport, data, f"{path} is not a saved eval report", "report")


def _non_finite_in(document: Any) -> str | None:
    """The dotted path of the first NaN or infinite number in ``document``, or None."""
    stack: list[tuple[str, Any]] = [("", document)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return where
        if isinstance(node, dict):
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((f"{where}.{i}" if where else str(i), v) for i, v in enumerate(node))
    return None
