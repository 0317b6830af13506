"""ASGI middleware: the request body limit, and one log line per request.

Both are plain ASGI (no ``BaseHTTPMiddleware``), so streaming and background tasks are untouched.
"""

from __future__ import annotations

import logging
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ragsonde.server.errors import BodyTooLargeError

__all__ = ["BodyLimitMiddleware", "RequestLogMiddleware"]

log = logging.getLogger("ragsonde.server")


def _declared_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class BodyLimitMiddleware:
    """Refuse bodies over ``max_bytes`` with 413, declared (Content-Length) or streamed (chunked).

    The error is raised when the app reads the body, so a route still checks the API key first,
    and the contract error handler shapes the answer. The oversized body is never buffered.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope)
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
            return message

        await self.app(scope, limited, send)


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
