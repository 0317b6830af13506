"""The fields of a ragsonde benchmark row, checked where the file is read: a value that is not
what its field says is a ValueError naming it, never read with ``str()`` or ``int()`` (each
function's docstring names what that had done)."""

from __future__ import annotations

from typing import Any

from ragsonde.models.validation import id_text

__all__ = ["GRADE_LIMIT", "check_search", "relevant_of", "text_and_id"]


def relevant_of(rel: Any) -> dict[str, int]:
    """A row's ``relevant``: ``{id: grade}``, or ids (a list, or one) each graded 1; ValueError
    for a grade that is not a whole number (1.7 was read as 1, true as 1) or beyond
    :data:`GRADE_LIMIT`, or an id that is none
    (:func:`~ragsonde.models.validation.id_text`)."""
    if isinstance(rel, dict):
        try:
            return {str(k): _whole(v) for k, v in rel.items()}
        except (TypeError, ValueError, OverflowError):
            raise ValueError(
                f"relevance grades must be integers from {-GRADE_LIMIT:,} to {GRADE_LIMIT:,}"
            ) from None
    values = rel if isinstance(rel, list) else [rel]
    return {id_text(v, f"relevant[{i}]"): 1 for i, v in enumerate(values)}


#: trec_eval holds a grade in a C int: 1e308 ended an eval in a SystemError, a server job in
#: "a bug, see the log", and an MCP call as a CONNECTION_ERROR.
GRADE_LIMIT = 2**31 - 1


def _whole(grade: Any) -> int:
    if isinstance(grade, bool) or (isinstance(grade, float) and not grade.is_integer()):
        raise ValueError(grade)
    whole = int(grade)
    if abs(whole) > GRADE_LIMIT:
        raise ValueError(grade)
    return whole


def text_and_id(row: dict[str, Any], n: int) -> tuple[str, str]:
    """A row's query text and id, or ValueError: a query that was a list or an object was
    searched as the text of its ``str()`` ("['lidar']"), without a word."""
    text = row["query"]
    if not isinstance(text, str):
        raise ValueError(f"query must be text, not {type(text).__name__}")
    return text, id_text(row.get("query_id", n), "query_id")


def check_search(row: dict[str, Any]) -> None:
    """A row's own ``top_k`` (a positive integer) and ``filters`` (an object), or ValueError:
    a ``top_k`` of 0 was read as none, a negative one cut the ranking from its end, and text
    ended the run in a traceback."""
    top_k, filters = row.get("top_k"), row.get("filters")
    if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"top_k must be a positive integer, not {top_k!r}")
    if filters is not None and not isinstance(filters, dict):
        raise ValueError(f'filters must be an object such as {{"url": "…"}}, not {filters!r}')
