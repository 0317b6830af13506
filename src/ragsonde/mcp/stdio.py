"""``ragsonde mcp``'s stdio transport: the SDK's, with every frame it cannot read answered.

The SDK's stdio reader hands a line it cannot validate to the session as an exception, and the
session only logs it. So a request holding text that is not Unicode (a lone surrogate escaped in
JSON: JSON allows ``"\\udc80"``, the protocol's UTF-8 cannot carry it) was never answered, and
the client waited for ever. Here each line is validated first, as the SDK validates it; a line
that fails is answered on the wire, and every other line goes to the SDK unchanged:

- a JSON object with a request ``id``: a JSON-RPC error to that id, ``-32602`` (invalid params)
  with the contract's ``VALIDATION_ERROR`` and why;
- a line that is no JSON, or JSON without an id: ``-32700`` (parse error) to id null, as
  JSON-RPC 2.0 says; a notification (no id) gets no answer (JSON-RPC answers no notification);
- bytes that are not UTF-8 are such a line too: the SDK read them with U+FFFD in their place,
  and a tool ran on text the client never sent.

The server still owns the wire: stdin's descriptor is moved off fd 0 (which then reads the null
device, as the SDK does it), so a tool or a child process can never read the client's bytes.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["answer_for", "run_stdio"]


def answer_for(raw: bytes) -> tuple[str | None, dict[str, Any] | None]:
    """One line of the wire as ``(text, None)`` when the SDK can read it, or ``(None, error)``:
    the JSON-RPC error that answers it. ``(None, None)``: nothing to forward or answer (a blank
    line, or a notification that cannot be read: JSON-RPC answers no notification)."""
    import mcp_types as types
    from pydantic import ValidationError

    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        why = f"bytes that are not UTF-8 at byte {e.start}"
    else:
        if not line.strip():
            return None, None
        try:
            read = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            if isinstance(read, types.JSONRPCNotification) and _has_id(line):
                # an id that is no string or integer: the SDK read a notification, and the
                # client waited for ever for its answer; JSON-RPC: Invalid Request, id null
                why = "a request's id must be a string or an integer"
                return None, _error(None, types.INVALID_REQUEST, f"VALIDATION_ERROR: {why}")
            return line, None
        except ValidationError as e:
            why = e.errors()[0]["msg"] if e.errors() else str(e)
    try:  # Python's reader takes what the SDK's refuses (a lone surrogate, an integer of 5,000
        # digits: over Python's limit too, so read as a string), to find the id
        frame = json.loads(raw.decode("utf-8", "replace"), parse_int=_any_int)
    except RecursionError:  # nested past both readers' limits: this ended the server
        frame = _shallow(raw.decode("utf-8", "replace"))
    except ValueError:
        frame = None
    if not isinstance(frame, dict):
        return None, _error(None, types.PARSE_ERROR, f"VALIDATION_ERROR: not JSON-RPC ({why})")
    if "method" in frame and "id" not in frame:
        return None, None
    rid = frame.get("id")
    if not isinstance(rid, str | int) or isinstance(rid, bool):
        return None, _error(None, types.INVALID_REQUEST, f"VALIDATION_ERROR: no request ({why})")
    if isinstance(rid, str):
        rid = rid.encode("utf-8", "replace").decode("utf-8")  # an id with a lone surrogate too
    message = f"VALIDATION_ERROR: the request cannot be read: {why}"
    return None, _error(rid, types.INVALID_PARAMS, message)


def _has_id(line: str) -> bool:
    """Whether the frame's top level names an ``id`` (of any value)."""
    if '"id"' not in line:  # a notification, as nearly every one is: no second read
        return False
    try:
        frame = json.loads(line, parse_int=_any_int)
    except RecursionError:
        frame = _shallow(line)
    except ValueError:
        return False
    return isinstance(frame, dict) and "id" in frame


def _shallow(text: str) -> dict[str, Any] | None:
    """A frame too deep for any reader, as its top-level ``id`` and ``method`` (the rest
    unread), found by a scan that follows strings and depth; None when it has neither."""
    out: dict[str, Any] = {}
    depth, i = 0, 0
    while i < len(text):
        c = text[i]
        if c == '"':
            end = _string_end(text, i)
            j = _skip_space(text, end + 1)
            if depth == 1 and j < len(text) and text[j] == ":":
                key = text[i : end + 1]
                k = _skip_space(text, j + 1)
                if key in ('"id"', '"method"') and k < len(text) and text[k] == '"':
                    out[key[1:-1]] = json.loads(text[k : _string_end(text, k) + 1])
                elif key == '"id"' and (number := _INT.match(text, k)) is not None:
                    out["id"] = _any_int(number.group())
            i = end + 1
            continue
        depth += (c in "{[") - (c in "}]")
        i += 1
    return out or None


_INT = re.compile(r"-?\d+(?![\d.eE])")


def _string_end(text: str, start: int) -> int:
    """The index of the quote that closes the JSON string opening at ``start``."""
    i = start + 1
    while i < len(text) and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _any_int(text: str) -> int | str:
    """A JSON integer, or its digits when Python will not make an int of them."""
    try:
        return int(text)
    except ValueError:
        return text


def _error(rid: str | int | None, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


class _Lines:
    """The client's lines that the SDK can read; each other line is answered through
    ``answer`` (the server's write stream, set once the transport is up)."""

    def __init__(self, wire: io.FileIO) -> None:
        import anyio

        self._wire = wire
        self.write: Any = None
        self.ready = anyio.Event()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        async for raw in _raw_lines(self._wire):
            line, error = answer_for(raw)
            if line is not None:
                yield line
            if error is None:
                continue
            await self.ready.wait()
            message = types.jsonrpc_message_adapter.validate_python(error)
            await self.write.send(SessionMessage(message))


async def _raw_lines(wire: io.FileIO) -> AsyncIterator[bytes]:
    """The client's lines as bytes, each with its newline, read by the event loop: it waits
    for the pipe, so Ctrl-C or SIGTERM ends the wait. (A thread blocked in ``readline`` could
    not be cancelled: the server ignored both signals until the client closed the pipe.) A
    regular file cannot be waited for and never blocks: it is read straight away."""
    import anyio

    fd, pending, pollable = wire.fileno(), bytearray(), True
    while True:
        if pollable:
            try:
                await anyio.wait_readable(fd)
            except (OSError, ValueError):  # a regular file: epoll refuses it
                pollable = False
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        pending += chunk
        end = pending.find(b"\n")
        while end >= 0:
            yield bytes(pending[: end + 1])
            del pending[: end + 1]
            end = pending.find(b"\n")
    if pending:
        yield bytes(pending)


@contextmanager
def _wire_stdin() -> Iterator[io.FileIO]:
    """The client's stdin on a descriptor of its own (read as bytes: each line is decoded
    strictly, where the SDK would put U+FFFD in place of bytes that are not UTF-8 without a
    word), and fd 0 on the null device meanwhile."""
    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    reader = io.FileIO(wire, "rb", closefd=True)
    try:
        yield reader
    finally:
        os.dup2(wire, 0)
        reader.close()


async def run_stdio(server: MCPServer[Any]) -> bool:
    """Serve ``server`` over stdio until the client closes the pipe (the SDK's
    ``run_stdio_async``, with :class:`_Lines` as its reader), or SIGTERM stops it: then True,
    once the requests in flight are cancelled and the transport is closed. The caller ends
    the process as the signal says, outside the event loop (:func:`ragsonde.mcp.serve_stdio`)."""
    import asyncio

    import anyio
    from mcp.server.stdio import stdio_server

    from ragsonde.mcp.sigterm import sigterm_cancels

    low = server._lowlevel_server  # the SDK's own run_stdio_async reaches it the same way
    with (
        anyio.CancelScope() as serving,
        sigterm_cancels(serving) as terminated,
        _wire_stdin() as wire,
    ):
        lines = _Lines(wire)
        try:
            async with stdio_server(stdin=cast(Any, lines)) as (read, write):
                lines.write = write
                lines.ready.set()
                await low.run(read, write, low.create_initialization_options())
        except BaseExceptionGroup as group:
            # Stopped (Ctrl-C) as a request arrived: the SDK's reader found the session
            # closed under it. That line is the client's to send again; the stop stays a
            # stop (asyncio turns the cancellation into Ctrl-C's exit), never a traceback.
            # SystemExit: the command line's SIGTERM, in the instants before the loop
            # takes the signal, re-raised by asyncio out of the loop from the task it
            # landed in; the group's copy is already on its way out.
            _, rest = group.split(
                (anyio.BrokenResourceError, anyio.ClosedResourceError, SystemExit)
            )
            if rest is not None:
                raise rest from None
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise asyncio.CancelledError from None
    return terminated()
