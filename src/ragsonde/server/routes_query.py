"""``POST /v1/query`` and ``POST /v1/query/batch``: the retriever over HTTP.

Bodies are the contract models, read raw and handed to the retriever, so aliases, limits and
per-query errors in a batch behave exactly as in the library. Retrieval runs in a worker thread:
the event loop keeps serving other requests while the model embeds.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response as HttpResponse

from ragsonde.errors import QueryValidationError, RagsondeError
from ragsonde.models import BatchResponse, Response
from ragsonde.models.text import JsonPath, invalid_text_in, printable
from ragsonde.models.validation import json_number
from ragsonde.server.errors import ERROR_RESPONSES, ApiError, json_response, status_for
from ragsonde.server.state import ServerState, get_state

__all__ = ["read_json", "router"]

log = logging.getLogger("ragsonde.server")
router = APIRouter(prefix="/v1", tags=["retrieval"])
State = Annotated[ServerState, Depends(get_state)]


def _body_schema(name: str) -> dict[str, Any]:
    schema = {"$ref": f"#/components/schemas/{name}"}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}}}


def _batch_error_responses() -> dict[int | str, dict[str, Any]]:
    """A batch answers an error status with one of two bodies: the error Response (a bad
    envelope, auth, size) or the BatchResponse whose queries all failed alike (see
    :func:`_batch_status`)."""
    either = {
        "anyOf": [
            {"$ref": "#/components/schemas/Response"},
            {"$ref": "#/components/schemas/BatchResponse"},
        ]
    }
    out: dict[int | str, dict[str, Any]] = {}
    for status, spec in ERROR_RESPONSES.items():
        if status in {401, 413}:
            out[status] = spec
        else:
            out[status] = {
                "description": f"{spec['description']}, or the BatchResponse when every query "
                "failed with this code",
                "content": {"application/json": {"schema": either}},
            }
    return out


async def read_json(request: Request, *, text: bool = True, rows: str | None = None) -> Any:
    """The request body parsed as JSON; a clear VALIDATION_ERROR (422) when it is not JSON.

    ``text``: refuse the body when any string in it (a key or a value, at any depth) is not
    valid Unicode, naming where; the query routes pass False because their contract models
    check each text themselves, so one bad query in a batch fails alone. ``rows``: the body's
    array of uploaded file rows (``benchmark``): a bad string there is named by its line.
    """
    raw = await request.body()
    if not raw.strip():
        raise ApiError(
            QueryValidationError("The request body is empty: send a JSON object.", field="body")
        )
    try:
        body = json.loads(raw, parse_float=json_number)  # 3.0 is an integer, as in JSON Schema
    except json.JSONDecodeError as e:
        where = f"line {e.lineno}, column {e.colno}: {e.msg}"
        raise ApiError(
            QueryValidationError(f"The request body is not valid JSON ({where}).", field="body")
        ) from e
    except (ValueError, RecursionError) as e:  # not UTF-8; nested too deeply
        raise ApiError(
            QueryValidationError(
                "The request body is not valid JSON (it must be UTF-8 and not nested deeply).",
                field="body",
            )
        ) from e
    found = invalid_text_in(body) if text else None
    if found is not None:
        path, value, at = found
        raise ApiError(
            QueryValidationError(
                f"{_where(path, rows)} must be valid Unicode text, but character {at} is a lone "
                f"surrogate (U+{ord(value[at]):04X}); send UTF-8.",
                field=".".join(printable(str(p)) for p in path) or "body",
            )
        )
    return body


def _where(path: JsonPath, rows: str | None) -> str:
    """``benchmark line 3, field 'query_id'`` for an uploaded row; else ``field 'a.b.0'``."""
    shown = [printable(str(p)) for p in path]
    if rows is not None and len(path) >= 2 and path[0] == rows and isinstance(path[1], int):
        inner = ".".join(shown[2:])
        return f"{rows} line {path[1] + 1}" + (f", field '{inner}'" if inner else "")
    return f"field '{'.'.join(shown)}'" if shown else "The body"


def _log_response(resp: Response) -> None:
    t = resp.timings
    log.info(
        "query %s -> %s%s, %d results, collection %s; embed %.1f ms, search %.1f ms, "
        "post %.1f ms, total %.1f ms",
        resp.query_id,
        resp.status,
        f" {resp.error.code.value}" if resp.error else "",
        resp.total_results,
        resp.collection,
        t.embedding_ms,
        t.search_ms,
        t.post_processing_ms,
        t.total_ms,
    )


@router.post(
    "/query",
    response_model=Response,
    responses=ERROR_RESPONSES,
    openapi_extra=_body_schema("Query"),
    summary="Retrieve the chunks most similar to one query",
)
async def query(request: Request, state: State) -> HttpResponse:
    """Answer one Query with a Response; errors come back as the error Response and its status."""
    body = await read_json(request, text=False)
    resp: Response = await run_in_threadpool(state.retriever.retrieve, body)
    _log_response(resp)
    return json_response(resp, status_for(resp.error.code) if resp.error else 200)


def _batch_status(out: BatchResponse) -> int:
    """200 unless every query failed with the same error code: then that code's status."""
    codes = {r.error.code for r in out.responses if r.error is not None}
    if out.status == "error" and len(codes) == 1:
        return status_for(codes.pop())
    return 200


def _batch_id(body: Any) -> str | None:
    bid = body.get("batch_id") if isinstance(body, Mapping) else None
    return bid if isinstance(bid, str) and bid else None


@router.post(
    "/query/batch",
    response_model=BatchResponse,
    responses=_batch_error_responses(),
    openapi_extra=_body_schema("BatchRequest"),
    summary="Retrieve for many queries at once (one embedding call, one search request)",
)
async def query_batch(request: Request, state: State) -> HttpResponse:
    """Answer a BatchRequest. A bad query gets its own error response and the batch is
    ``partial`` (200); a bad envelope (no queries, too many) is a 422 error Response."""
    body = await read_json(request, text=False)
    try:
        out: BatchResponse = await run_in_threadpool(state.retriever.retrieve_batch, body)
    except RagsondeError as e:
        raise ApiError(e, query_id=_batch_id(body)) from e
    for resp in out.responses:
        _log_response(resp)
    log.info(
        "batch %s -> %s, %d queries in %.1f ms",
        out.batch_id,
        out.status,
        len(out.responses),
        out.batch_latency_ms,
    )
    return json_response(out, _batch_status(out))
