"""``failing_queries`` over traffic: the weakest queries of a traffic report, with their
evidence, from a saved traffic JSON (``ragsonde traffic -o``) or a recorded traffic run.

A recorded traffic run is an evaluation whose benchmark is named ``traffic-<hash>``
(:mod:`ragsonde.traffic.record`); each query's row carries ``predicted``, ``weak`` and the
evidence signals. ``last`` and ``last~N`` count traffic runs only.
"""

from __future__ import annotations

import heapq
import json
import re
from pathlib import Path

from ragsonde.errors import QueryValidationError
from ragsonde.mcp.models import FailingQueries, FailingQuery
from ragsonde.models.text import not_utf8, unreadable

__all__ = ["is_run_ref", "weakest_of_history", "weakest_of_report"]

_REF = re.compile(r"^(last(~\d+)?|\d{1,18})$")
_TRAFFIC = "traffic-"


def is_run_ref(ref: str) -> bool:
    """Whether ``ref`` names a recorded run (``last``, ``last~N``, an id), not a file."""
    return bool(_REF.match(ref.strip()))


def weakest_of_report(path: Path, limit: int) -> FailingQueries:
    """The ``limit`` lowest-predicted queries of the traffic report JSON at ``path`` (ties: the
    most asked first, then the order of the report), its rows read one at a time
    (:func:`~ragsonde.traffic.report.read_report`)."""
    from pydantic import ValidationError

    from ragsonde.traffic.html import EVIDENCE, explain_command
    from ragsonde.traffic.report import read_report

    why = unreadable(path)
    if why is not None:
        raise QueryValidationError(f"traffic: cannot read {path}: {why}", field="traffic")
    try:
        report, rows = read_report(path)
        scored = (
            (q.predicted, -q.weight, i, q) for i, q in enumerate(rows) if q.predicted is not None
        )
        weakest = [q for *_, q in heapq.nsmallest(limit, scored)]
    except (ValidationError, ValueError) as e:
        raise QueryValidationError(
            f"traffic: {path.name} is not a ragsonde traffic report ({_first(e)}).",
            field="traffic",
        ) from e
    except OSError as e:
        raise QueryValidationError(
            f"traffic: cannot read {path}: {e.strerror or e}", field="traffic"
        ) from e
    return FailingQueries(
        source=f"traffic report {path}",
        metric="predicted",
        total=report.n_queries,
        queries=[
            FailingQuery(
                query_id=q.query_id,
                query=q.query,
                value=q.predicted or 0.0,
                relevant=[],
                retrieved=q.top_ids,
                weak=q.weak,
                signals={n: q.signals[n] for n in EVIDENCE if n in q.signals},
                next=explain_command(report, q),
            )
            for q in weakest
        ],
    )


def _first(e: Exception) -> str:
    if isinstance(e, UnicodeDecodeError):
        return not_utf8(e)
    if isinstance(e, json.JSONDecodeError):
        return f"it is not JSON: {e.msg} at line {e.lineno} column {e.colno}"
    errors = getattr(e, "errors", None)
    if callable(errors):
        first = errors()[0]
        return f"{first['msg']} at {'.'.join(str(p) for p in first['loc']) or 'the top'}"
    return str(e)


def weakest_of_history(history: Path, ref: str, limit: int) -> FailingQueries:
    """The ``limit`` lowest-predicted queries of the recorded traffic run ``ref``."""
    from ragsonde.history import HistoryStore
    from ragsonde.traffic.html import query_command

    if not history.exists():  # absent: no runs; a damaged path: its error
        raise QueryValidationError(
            f"traffic: no run history at {history}: run `ragsonde traffic` with recording first.",
            field="traffic",
        )
    with HistoryStore(history) as hs:
        ids = [s.run_id for s in hs.runs() if s.benchmark.startswith(_TRAFFIC)]
        ref = ref.strip()
        if ref.isdigit():
            run_id = int(ref)
            if run_id not in ids:
                raise QueryValidationError(
                    f"traffic: run {ref} is not a traffic run of {history}.", field="traffic"
                )
        else:
            back = int(ref.partition("~")[2] or "0")
            if back >= len(ids):
                raise QueryValidationError(
                    f"traffic: {ref}, but {history} holds {len(ids)} traffic run(s).",
                    field="traffic",
                )
            run_id = ids[-1 - back]
        report = hs.get(run_id).report
    rows = [(qid, row) for qid, row in report.per_query.items() if "predicted" in row.metrics]
    rows.sort(key=lambda t: (t[1].metrics["predicted"], t[0]))
    collection = report.collection
    return FailingQueries(
        source=f"traffic run {run_id}",
        metric="predicted",
        total=report.benchmark.queries,
        queries=[
            FailingQuery(
                query_id=qid,
                query=row.query,
                value=row.metrics["predicted"],
                relevant=[],
                retrieved=[doc for doc, _ in row.retrieved],
                weak=row.metrics["weak"] == 1.0 if "weak" in row.metrics else None,
                signals={n: v for n, v in row.metrics.items() if n not in ("predicted", "weak")},
                next=query_command(row.query, collection),
            )
            for qid, row in rows[:limit]
        ],
    )
