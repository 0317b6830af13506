"""ASGI middleware: the request body's rules (size, JSON only, not compressed), HEAD answered as
GET, one log line per request, and the caller's trace continued (an incoming ``traceparent``,
when tracing is on).

Both are plain ASGI (no ``BaseHTTPMiddleware``), so streaming and background tasks are untouched.
"""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragsonde.server.errors import (
    BodyTooLargeError,
    UnsupportedEncodingError,
    UnsupportedMediaTypeError,
)

__all__ = [
    "BODY_METHODS",
    "JSON_MEDIA_TYPE",
    "BodyLimitMiddleware",
    "HeadMiddleware",
    "RequestLogMiddleware",
    "TraceContextMiddleware",
]

log = logging.getLogger("ragsonde.server")

#: Methods whose body must be JSON.
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
JSON_MEDIA_TYPE = "application/json"


def _header(scope: Scope, wanted: bytes) -> bytes | None:
    for name, value in scope.get("headers", ()):
        if name == wanted:
            return bytes(value)
    return None


def _declared_length(scope: Scope) -> int | None:
    value = _header(scope, b"content-length")
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _media_type(scope: Scope) -> str:
    """The Content-Type without parameters (``application/json; charset=utf-8`` → the type)."""
    raw = _header(scope, b"content-type") or b""
    return raw.decode("latin-1").partition(";")[0].strip().lower()


def _content_coding(scope: Scope) -> str:
    """The Content-Encoding, ``""`` when none (or ``identity``, which means none)."""
    raw = (_header(scope, b"content-encoding") or b"").decode("latin-1").strip().lower()
    return "" if raw == "identity" else raw


class BodyLimitMiddleware:
    """Refuse bodies over ``max_bytes`` with 413, declared (Content-Length) or streamed (chunked),
    and (``json_only``) POST/PUT/PATCH bodies that are not ``application/json``, or that come
    compressed (``Content-Encoding: gzip``), with 415 (RFC 9110 §15.5.16): a gzip body was read
    as JSON and refused as "not UTF-8".

    JSON only: a browser sends a cross-site ``<form>`` POST (``text/plain``, urlencoded or
    multipart) without asking the server first, so with no API key set any page could start work
    here; a JSON body needs a CORS preflight, which this server never grants.

    The errors are raised when the app reads the body, so a route still checks the API key
    first, and the contract error handler shapes the answer. The size is checked as the body
    arrives (an oversized body is never buffered), the media type once it has all arrived, so
    an oversized body is a 413 whatever its type.
    """

    def __init__(self, app: ASGIApp, max_bytes: int, *, json_only: bool = True) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.json_only = json_only

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope)
        check_type = self.json_only and scope.get("method") in BODY_METHODS
        media_type = _media_type(scope)
        coding = _content_coding(scope) if check_type else ""
        received = 0

        async def limited() -> Message:
            nonlocal received
            if declared is not None and declared > self.max_bytes:
                raise BodyTooLargeError(self.max_bytes)
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLargeError(self.max_bytes)
                if check_type and not message.get("more_body"):
                    if media_type != JSON_MEDIA_TYPE:
                        raise UnsupportedMediaTypeError(media_type)
                    if coding:
                        raise UnsupportedEncodingError(coding)
            return message

        await self.app(scope, limited, send)


class HeadMiddleware:
    """Answer ``HEAD`` as the route's ``GET`` without its body (RFC 9110 §9.3.2: a server that
    serves GET serves HEAD). FastAPI routes a GET route's HEAD nowhere: ``HEAD /healthz``, the
    page and every ``/v1/`` GET were ``405``, so a monitor probing with HEAD saw the server down.
    The GET's headers are kept (``Content-Length`` included); the route checks the key as for
    GET.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)


class RequestLogMiddleware:
    """Log ``METHOD path -> status in N ms`` for every request (never headers or bodies)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def capture(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, capture)
        finally:
            log.info(
                "%s %s -> %d in %.1f ms",
                scope.get("method", "?"),
                scope.get("path", "?"),
                status,
                (time.perf_counter() - start) * 1000.0,
            )


class TraceContextMiddleware:
    """Continue the caller's trace: the W3C ``traceparent`` (and ``tracestate``) of a request
    become the context its retrieval spans are children of (:mod:`ragsonde.tracing`). Nothing
    is read when tracing is off."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        from ragsonde.tracing import active

        if scope["type"] != "http" or _header(scope, b"traceparent") is None or not active():
            await self.app(scope, receive, send)
            return
        from opentelemetry import context, propagate, trace

        if trace.get_current_span().get_span_context().is_valid:
            # an instrumentation (FastAPI's, a proxy's ASGI one) already continued the trace
            # with its server span: attaching the caller's context again made the retrieval a
            # sibling of that span, and a garbage traceparent a trace of its own
            await self.app(scope, receive, send)
            return
        carrier = {
            bytes(k).decode("latin-1"): bytes(v).decode("latin-1")
            for k, v in scope.get("headers", ())
        }
        token = context.attach(propagate.extract(carrier))
        try:
            await self.app(scope, receive, send)
        finally:
            context.detach(token)
