"""The one boundary where a failed tool call becomes an MCP tool error.

Every failure comes back as ``isError`` with the contract's error object, as structured content
and as its JSON text, never as a protocol error or a traceback: a ragsonde error keeps its code
and message; arguments the tool's input schema refuses are a VALIDATION_ERROR naming each field;
anything else (a bug) is logged and answered as the HTTP server answers it, a CONNECTION_ERROR
naming only the exception's type (its text may quote input or a secret).
"""

from __future__ import annotations

import json
import logging

from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, TextContent
from pydantic import ValidationError

from ragsonde.errors import (
    ErrorCode,
    QueryValidationError,
    RagsondeError,
    StoreConnectionError,
)
from ragsonde.models import ErrorInfo, printable

__all__ = ["AnsweredError", "error_info", "error_result"]

log = logging.getLogger("ragsonde.mcp")


class AnsweredError(Exception):
    """The library answered with the contract's error object (an error Response) instead of
    raising: carried to the boundary as it is."""

    def __init__(self, info: ErrorInfo) -> None:
        super().__init__(info.message)
        self.info = info


def _arguments_error(err: ValidationError, tool: str) -> QueryValidationError:
    parts: list[str] = []
    first: str | None = None
    for item in err.errors(include_url=False):
        loc = printable(".".join(str(p) for p in item["loc"])) or "arguments"
        first = first or loc
        msg = str(item["msg"]).removeprefix("Value error, ")
        parts.append(f"{loc}: {msg}")
    return QueryValidationError(
        f"Invalid arguments for tool '{tool}': " + "; ".join(parts), field=first
    )


def error_info(exc: BaseException, tool: str) -> ErrorInfo:
    """The contract error object for ``exc``, raised by (or around) the tool ``tool``."""
    cause = exc.__cause__ if isinstance(exc, ToolError) and exc.__cause__ is not None else exc
    if isinstance(cause, AnsweredError):
        return cause.info
    if isinstance(cause, RagsondeError):
        return ErrorInfo.from_exception(cause)
    if isinstance(cause, ValidationError) and not isinstance(exc, UnexpectedToolError):
        return ErrorInfo.from_exception(_arguments_error(cause, tool))
    if isinstance(exc, ToolError) and not isinstance(exc, UnexpectedToolError):
        # the SDK's own refusal (an unknown tool): its text names no secret
        message = str(exc).removeprefix(f"Error executing tool {tool}: ")
        return ErrorInfo(code=ErrorCode.VALIDATION_ERROR, message=message)
    log.error("tool %s failed unexpectedly: %s", tool, type(cause).__name__, exc_info=cause)
    return ErrorInfo.from_exception(
        StoreConnectionError(
            f"Tool '{tool}' failed unexpectedly ({type(cause).__name__}). Try again; if it keeps "
            "failing, the server's log (stderr) has the details."
        )
    )


def error_result(exc: BaseException, tool: str) -> CallToolResult:
    """The ``isError`` result for ``exc``: ``{"error": {code, message}}``, structured and as
    JSON text."""
    from ragsonde.mcp.models import ToolErrorBody

    body = ToolErrorBody(error=error_info(exc, tool)).model_dump(mode="json")
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(body, ensure_ascii=False))],
        structured_content=body,
        is_error=True,
    )
