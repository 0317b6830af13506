"""``POST /v1/traffic``: the label-free health of logged queries, over HTTP (``ragsonde
traffic`` for rows a client sends; a Traffic view of the page can post to it).

The body is ``{"records": [row, …], "collection"?, "search"?, "weak_below"?}``: each row a query
log row as ``ragsonde traffic`` reads one (``query``, and optionally ``query_id``, ``timestamp``,
``ids``, ``scores``, ``top_k``, …; :mod:`ragsonde.traffic.logs`), at most :data:`MAX_RECORDS`.
The answer is the traffic report (its schema: ``ragsonde schema traffic``); rows that cannot be
read are counted in its ``read`` block. The run is not recorded in the history.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.concurrency import run_in_threadpool

from ragsonde.errors import QueryValidationError, RagsondeError
from ragsonde.evaluate.options import options_error
from ragsonde.models.params import SearchParams
from ragsonde.server.bounds import within_max_top_k
from ragsonde.server.errors import ERROR_RESPONSES, ApiError
from ragsonde.server.routes_query import read_json
from ragsonde.server.state import ServerState, get_state
from ragsonde.traffic.logs import row_query
from ragsonde.traffic.predictor import WEAK_BELOW
from ragsonde.traffic.read import Traffic
from ragsonde.traffic.records import ReadStats, TrafficQuery
from ragsonde.traffic.report import TrafficReport
from ragsonde.traffic.run import TrafficOptions, analyse
from ragsonde.traffic.shape import merge

__all__ = ["MAX_RECORDS", "TrafficRequest", "router"]

router = APIRouter(prefix="/v1/traffic", tags=["traffic"])
State = Annotated[ServerState, Depends(get_state)]
#: Rows one request may send: each is replayed while the client waits.
MAX_RECORDS = 1000


class TrafficRequest(BaseModel):
    """What to analyse: query log rows, against a collection with a search."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    records: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_RECORDS)
    collection: str | None = Field(default=None, min_length=1, max_length=255)
    search: SearchParams | None = None
    weak_below: float = Field(default=WEAK_BELOW, ge=0.0, le=1.0)


def _analyse(state: ServerState, req: TrafficRequest) -> TrafficReport:
    within_max_top_k(state, req.search)
    stats = ReadStats(files={"request": "records"})
    rows: list[TrafficQuery] = []
    for i, row in enumerate(req.records):
        found = row_query(row, f"records[{i}]", stats)
        if found is not None:
            rows.append(found)
    queries = merge(rows, stats)
    if not queries:
        raise QueryValidationError(
            f"No query in the records: {stats.malformed} malformed, {stats.no_query_text} "
            "without query text" + (f" (first: {stats.examples[0]})" if stats.examples else ""),
            field="records",
        )
    options = TrafficOptions(search=req.search, weak_below=req.weak_below)
    report = analyse(Traffic(queries, stats), state.workspace, options, collection=req.collection)
    return report.materialised()  # at most MAX_RECORDS rows: the answer holds them all


@router.post(
    "",
    responses=ERROR_RESPONSES,
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": TrafficRequest.model_json_schema()}},
        }
    },
)
async def traffic(request: Request, state: State) -> TrafficReport:
    """Replay the rows' queries and predict each one's health, without labels."""
    # a lone surrogate anywhere (an id too, which row_query does not check) is a 422 naming its
    # record, before any of it reaches the report's JSON
    data = await read_json(request, rows="records")
    try:
        req = TrafficRequest.model_validate(data, strict=True)  # weak_below: true is no 1.0
    except ValidationError as e:
        raise ApiError(options_error(e)) from e
    try:
        return await run_in_threadpool(_analyse, state, req)
    except RagsondeError as e:
        raise ApiError(e, collection=req.collection) from e
