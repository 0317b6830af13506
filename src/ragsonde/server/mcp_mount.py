"""The MCP tools over streamable HTTP, at ``/mcp`` of ``ragsonde serve``.

They share the app's workspace and retriever (one model, one store), sit behind the same API
key as the ``/v1/`` routes (:func:`ragsonde.server.security.key_refused`), and only read
(``ingest`` and history recording exist only in ``ragsonde mcp --allow-write``). Paths are read
only in the server's dataset folders, as ``/v1/eval`` reads them, with its one refusal: the
roots a client declares are not asked for (a client that declared ``file:///`` read
``/etc/shadow``'s first line in an error, and any JSON Lines file on the disk whole).

Without an API key the SDK's DNS-rebinding protection holds (Host and Origin must be loopback),
as a keyless server is meant for this machine; with a key, the key guards, so a server reached
by its name (``--host 0.0.0.0``) answers too.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from ragsonde.mcp.roots import Roots
from ragsonde.mcp.server import build_server
from ragsonde.mcp.stdio import answer_for
from ragsonde.mcp.tools import Room
from ragsonde.models import ErrorInfo
from ragsonde.server.datasets import dataset_roots
from ragsonde.server.security import CHALLENGE, key_refused
from ragsonde.server.state import ServerState

__all__ = ["MCP_PATH", "mount_mcp"]

MCP_PATH = "/mcp"

#: The one answer to a path outside the dataset folders or missing in them.
REFUSED = (
    "paths are read only in the server's dataset folders (RAGSONDE_EVAL_DATASETS, default "
    "<home>/datasets and <home>/benchmarks): name a file inside one, or give the rows inline."
)


class _KeyGuard:
    """ASGI: the API key first (401 with the contract's error object), then the MCP app."""

    def __init__(self, app: StreamableHTTPASGIApp, state: ServerState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = key_refused(Headers(scope=scope), self.state.settings.api_key)
        if refused is not None:
            info = ErrorInfo.from_exception(refused).model_dump(mode="json")
            await _send_json(send, 401, {"status": "error", "error": info}, CHALLENGE)
            return
        if scope.get("method") == "POST":
            # the frame the SDK cannot answer, answered as over stdio: a request whose id is
            # no string or integer was taken for a notification (202, and no answer ever); a
            # lone surrogate or a frame nested too deeply, to its id rather than to null
            body, receive = await _buffered(receive)
            _, error = answer_for(body)
            if error is not None:
                await _send_json(send, 400, error)
                return
        await self.app(scope, receive, send)


async def _buffered(receive: Receive) -> tuple[bytes, Receive]:
    """The whole request body, and a ``receive`` that hands it on once, then the rest."""
    chunks: list[bytes] = []
    more = True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        more = bool(message.get("more_body"))
    body = b"".join(chunks)
    given = False

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay


async def _send_json(
    send: Send, status: int, body: dict[str, Any], extra: dict[str, str] | None = None
) -> None:
    headers = [(b"content-type", b"application/json")]
    headers += [(k.lower().encode(), v.encode()) for k, v in (extra or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": json.dumps(body).encode()})


def mount_mcp(app: FastAPI, state: ServerState) -> None:
    """Serve the read-only tools at ``/mcp`` of ``app``, over ``state``'s workspace."""
    roots = Roots(dataset_roots(state), refusal=REFUSED)  # never the client's roots
    room = Room(state.workspace, roots=roots, retriever=state.retriever)
    server = build_server(room)
    security = (
        TransportSecuritySettings(enable_dns_rebinding_protection=False)
        if state.settings.api_key is not None
        else None  # the SDK's default for a loopback host
    )
    server.streamable_http_app(streamable_http_path=MCP_PATH, transport_security=security)
    guarded = _KeyGuard(StreamableHTTPASGIApp(server.session_manager), state)
    app.router.routes.append(Route(MCP_PATH, endpoint=guarded))
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(a: Any) -> AsyncIterator[Any]:
        # the session manager's task group lives as long as the app
        async with inner(a) as value, server.session_manager.run():
            yield value

    app.router.lifespan_context = lifespan
