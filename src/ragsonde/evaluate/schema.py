"""The published JSON Schemas of what evaluation writes, by name.

``report`` is what ``ragsonde eval --json`` / ``--save`` write (an :class:`EvalReport`, or with
``--versus`` a :class:`VersusReport`), and what ``GET /v1/eval/{job_id}`` returns as ``report``;
``comparison`` is what ``ragsonde compare --json`` writes; ``options`` is what an evaluation takes
(:class:`~ragsonde.evaluate.EvalOptions`, the same from the library, the CLI and HTTP). The
report's schema ships in the package as ``report.schema.json``; regenerate it after changing a
model with ``python -m ragsonde.evaluate.schema`` (a test fails while the file and the models
differ).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.comparison import Comparison
from ragsonde.evaluate.options import EvalOptions
from ragsonde.evaluate.report import SCHEMA_VERSION, EvalReport, VersusReport

__all__ = ["SCHEMAS", "SCHEMA_FILE", "get_schema", "schema_text"]

SCHEMA_FILE = Path(__file__).with_name("report.schema.json")


def _report() -> dict[str, Any]:
    schema = TypeAdapter(EvalReport | VersusReport).json_schema(mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
        "title": f"ragsonde evaluation report {SCHEMA_VERSION}",
    }


def _comparison() -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **Comparison.model_json_schema(mode="serialization"),
        "title": f"ragsonde comparison {SCHEMA_VERSION}",
    }


def _options() -> dict[str, Any]:
    """What every surface builds once: the library's argument, the eval command's flags, the
    options of a ``POST /v1/eval`` body, the pytest plugin's keywords."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **EvalOptions.model_json_schema(mode="validation"),
        "title": f"ragsonde evaluation options {SCHEMA_VERSION}",
    }


def _history(model: type[BaseModel], what: str) -> Callable[[], dict[str, Any]]:
    def build() -> dict[str, Any]:
        return {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            **model.model_json_schema(mode="serialization"),
            "title": f"ragsonde {what} {SCHEMA_VERSION}",
        }

    return build


def _history_schemas() -> dict[str, Callable[[], dict[str, Any]]]:
    from ragsonde.history import models as h

    return {
        "history-list": _history(h.RunList, "history list"),
        "history-show": _history(h.RunShow, "history show"),
        "history-diff": _history(h.RunDiff, "history diff"),
        "history-trend": _history(h.Trend, "history trend"),
        "history-prune": _history(h.PruneResult, "history prune"),
        "history-export": _history(h.ExportResult, "history export"),
    }


#: Schema name -> builder; ``ragsonde schema NAME`` prints one. ``history-*``: what
#: ``ragsonde history … --json`` prints.
SCHEMAS: dict[str, Callable[[], dict[str, Any]]] = {
    "report": _report,
    "comparison": _comparison,
    "options": _options,
    **_history_schemas(),
}


def get_schema(name: str) -> dict[str, Any]:
    """The JSON Schema called ``name`` (one of :data:`SCHEMAS`)."""
    if name not in SCHEMAS:
        raise QueryValidationError(
            f"no schema {name!r}; there are: {', '.join(SCHEMAS)}.", field="name"
        )
    return SCHEMAS[name]()


def schema_text(name: str = "report") -> str:
    """The schema as the published file holds it."""
    return json.dumps(get_schema(name), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    SCHEMA_FILE.write_text(schema_text("report"), encoding="utf-8")
    print(f"wrote {SCHEMA_FILE}")
