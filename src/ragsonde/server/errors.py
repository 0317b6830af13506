"""The HTTP side of the error contract: error code → status, and the error body.

Every error the server answers carries the contract's error :class:`~ragsonde.models.Response`
(``status: "error"``, empty ``results``, ``error: {code, message}``), whatever went wrong: a query
the retriever refused, a malformed or oversized body, a missing API key, an unknown route.
Tracebacks never reach a body.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response as HttpResponse
from starlette.routing import compile_path

from ragsonde.errors import ErrorCode, QueryValidationError, RagsondeError, StoreConnectionError
from ragsonde.models import Response
from ragsonde.server.state import get_state

__all__ = [
    "ERROR_RESPONSES",
    "HTTP_STATUS",
    "ApiError",
    "BodyTooLargeError",
    "UnsupportedEncodingError",
    "UnsupportedMediaTypeError",
    "html_error_responses",
    "install_error_handlers",
    "json_response",
    "status_for",
]

log = logging.getLogger("ragsonde.server")

#: Contract error code -> HTTP status. Auth and embedding failures are the upstream's fault (502).
HTTP_STATUS: dict[ErrorCode, int] = {
    ErrorCode.VALIDATION_ERROR: 422,
    ErrorCode.COLLECTION_NOT_FOUND: 404,
    ErrorCode.AUTH_ERROR: 502,
    ErrorCode.EMBEDDING_ERROR: 502,
    ErrorCode.CONNECTION_ERROR: 503,
    ErrorCode.DIMENSION_MISMATCH: 409,
    ErrorCode.LLM_ERROR: 502,
}


def _error_responses() -> dict[int | str, dict[str, object]]:
    out: dict[int | str, dict[str, object]] = {
        401: {"model": Response, "description": "AUTH_ERROR: missing or wrong API key"},
        413: {"model": Response, "description": "VALIDATION_ERROR: request body too large"},
        415: {
            "model": Response,
            "description": "VALIDATION_ERROR: the body is not JSON, or it is compressed",
        },
    }
    for status in sorted(set(HTTP_STATUS.values())):
        codes = " or ".join(c.value for c, s in HTTP_STATUS.items() if s == status)
        out[status] = {"model": Response, "description": f"{codes}: the contract error Response"}
    return out


#: For the OpenAPI document: every status an API route may answer with the error Response.
ERROR_RESPONSES = _error_responses()


def status_for(code: ErrorCode) -> int:
    """The HTTP status for a contract error code."""
    return HTTP_STATUS[code]


class ApiError(Exception):
    """Answer the request with ``error`` as a contract error Response.

    ``status`` overrides the code's usual status (401 for a missing API key, 413 for a large
    body); ``query``, ``query_id``, ``collection`` echo what the request said, where known.
    """

    def __init__(
        self,
        error: RagsondeError,
        *,
        status: int | None = None,
        headers: Mapping[str, str] | None = None,
        query: str = "",
        query_id: str | None = None,
        collection: str | None = None,
    ) -> None:
        super().__init__(error.message)
        self.error = error
        self.status = status if status is not None else status_for(error.code)
        self.headers = dict(headers or {})
        self.query = query
        self.query_id = query_id
        self.collection = collection


class BodyTooLargeError(ApiError):
    """The request body is over ``max_body_bytes`` (HTTP 413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            QueryValidationError(
                f"Request body too large: the limit is {limit} bytes "
                "(RAGSONDE_MAX_BODY_BYTES). Send fewer or shorter queries per request.",
                field="body",
            ),
            status=413,
        )


class UnsupportedMediaTypeError(ApiError):
    """A POST/PUT/PATCH body that is not ``application/json`` (HTTP 415)."""

    def __init__(self, media_type: str) -> None:
        got = f"'{media_type[:100]}'" if media_type else "no Content-Type"
        super().__init__(
            QueryValidationError(
                f"Request bodies must be JSON: send 'Content-Type: application/json' (got {got}).",
                field="body",
            ),
            status=415,
        )


class UnsupportedEncodingError(ApiError):
    """A body sent compressed (``Content-Encoding: gzip``, HTTP 415): the server reads it as is."""

    def __init__(self, coding: str) -> None:
        super().__init__(
            QueryValidationError(
                f"Request bodies must not be compressed (got 'Content-Encoding: {coding[:50]}'): "
                "send the JSON as is, without Content-Encoding.",
                field="body",
            ),
            status=415,
        )


def json_response(
    model: BaseModel, status: int = 200, headers: Mapping[str, str] | None = None
) -> HttpResponse:
    """``model`` as JSON, serialized by pydantic (so contract serializers apply)."""
    return HttpResponse(
        content=model.model_dump_json(),
        status_code=status,
        media_type="application/json",
        headers=dict(headers or {}),
    )


def _error_body(request: Request, exc: ApiError) -> Response:
    state = get_state(request)
    return Response.failure(
        exc.error,
        query=exc.query,
        query_id=exc.query_id or str(uuid.uuid4()),
        top_k=5,
        collection=exc.collection or state.settings.collection,
        model=state.retriever.model_name,
    )


async def _on_api_error(request: Request, exc: Exception) -> HttpResponse:
    if not isinstance(exc, ApiError):  # registered for ApiError only
        raise exc
    return json_response(_error_body(request, exc), exc.status, exc.headers)


async def _on_request_validation(request: Request, exc: Exception) -> HttpResponse:
    """Path and query-string parameters FastAPI validates itself (e.g. ``?sample=``)."""
    if not isinstance(exc, RequestValidationError):
        raise exc
    parts = []
    for item in exc.errors():
        loc = ".".join(str(p) for p in item.get("loc", ())) or "request"
        parts.append(f"{loc}: {item.get('msg', 'is invalid')}")
    error = QueryValidationError("Invalid request: " + "; ".join(parts))
    return await _on_api_error(request, ApiError(error))


async def _on_http_exception(request: Request, exc: Exception) -> HttpResponse:
    """Unknown routes (404), wrong methods (405) and the like, in the contract's shape."""
    if not isinstance(exc, StarletteHTTPException):
        raise exc
    message = f"{exc.detail}: {request.method} {request.url.path}"
    if exc.status_code == 404:
        message += " (the API lives under /v1/; see /docs)"
    error = QueryValidationError(message)
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = _allowed(request, headers.get("Allow", ""))
    return await _on_api_error(request, ApiError(error, status=exc.status_code, headers=headers))


def _allowed(request: Request, starlette_said: str) -> str:
    """Every method the path takes, for a 405's ``Allow`` (RFC 9110): Starlette names only the
    first route whose path matched, so ``OPTIONS /v1/eval`` said ``Allow: POST`` where ``GET``
    is served too (schemathesis, ST205). Read off the OpenAPI document's path templates."""
    methods = {m.strip() for m in starlette_said.split(",") if m.strip()}
    for template, operations in request.app.openapi().get("paths", {}).items():
        if compile_path(template)[0].match(request.url.path):
            methods |= {m.upper() for m in operations}
    if "GET" in methods:  # served as GET without the body (middleware.HeadMiddleware)
        methods.add("HEAD")
    return ", ".join(sorted(methods))


async def _on_unhandled(request: Request, exc: Exception) -> HttpResponse:
    """A bug: log the traceback, answer the contract error body (500), never plain text.

    The contract has no code for "the server itself failed"; CONNECTION_ERROR is the one a client
    already treats as "the service could not answer, try again later". The message names only
    the exception's type: its text may quote input or a secret.
    """
    log.error(
        "unhandled %s on %s %s", type(exc).__name__, request.method, request.url.path, exc_info=exc
    )
    error = StoreConnectionError(
        f"The server failed unexpectedly ({type(exc).__name__}) and could not answer. Try again; "
        "if it keeps failing, the server log has the details."
    )
    return json_response(_error_body(request, ApiError(error, status=500)), 500)


async def _on_client_gone(request: Request, exc: Exception) -> HttpResponse:
    """The client closed the connection before its whole body arrived: nobody reads an answer,
    and the server did not fail. It was an unhandled exception, logged as two tracebacks a
    request (a hostile client could fill the log with them)."""
    log.info("client went away before its body ended: %s %s", request.method, request.url.path)
    return HttpResponse(status_code=400)


def install_error_handlers(app: FastAPI) -> None:
    """Register every handler that turns an exception into the contract error body."""
    from starlette.requests import ClientDisconnect

    app.add_exception_handler(Exception, _on_unhandled)
    app.add_exception_handler(ClientDisconnect, _on_client_gone)
    app.add_exception_handler(ApiError, _on_api_error)
    app.add_exception_handler(RequestValidationError, _on_request_validation)
    app.add_exception_handler(StarletteHTTPException, _on_http_exception)


def html_error_responses() -> dict[int | str, dict[str, Any]]:
    """ERROR_RESPONSES for a route whose success is HTML: FastAPI would file the error
    Response under the route's ``text/html``, but errors are always JSON."""
    ref = {"$ref": "#/components/schemas/Response"}
    return {
        status: {
            "description": spec["description"],
            "content": {"application/json": {"schema": ref}},
        }
        for status, spec in ERROR_RESPONSES.items()
    }
