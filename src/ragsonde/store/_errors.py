"""The store's error boundary: library exceptions become :mod:`ragsonde.errors`, by type.

Two tables, one per backend, map an exception *class* to a rule that builds the ragsonde
error. A raised exception is looked up along its MRO, most specific class first; HTTP and gRPC
failures are then split by their status code (:data:`STATUS_CODES`), never by message text.
What no table names (``TypeError``, ``AttributeError``, ``KeyError``, …) is a bug in ragsonde and
propagates unchanged, so it shows as a traceback and not as a CONNECTION_ERROR.

qdrant-client (remote and local mode)::

    UnexpectedResponse            by HTTP status (401/403 auth, 404 not found, 4xx validation,
                                  408/429/5xx connection)
    ResponseHandlingException     by its ``source`` (an httpx error), else connection
    ResourceExhaustedResponse     connection (rate limited)
    QdrantException, ApiException connection
    httpx.HTTPStatusError         by HTTP status
    httpx.InvalidURL              validation (QDRANT_URL)
    httpx.HTTPError, StreamError,
      CookieConflict              connection
    grpc.RpcError                 by gRPC status code
    portalocker LockException     connection (a local-mode folder in use: says so)
    NotImplementedError           validation (local mode lacks the feature)
    RuntimeError                  connection (client closed, folder in use: says so)
    ValueError                    validation (the client's own input checks; pydantic's too)
    OSError                       connection

qdrant-edge raises the plain ``Exception`` class for every engine failure (no subclasses exist),
so its table keys that exact class; a subclass of ``Exception`` is not caught by that rule. What
the engine would refuse with a message (a missing collection, a wrong vector size, a point id it
cannot parse) is checked before the call, in the store.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ragsonde.errors import (
    AuthError,
    CollectionNotFoundError,
    CollectionUnreadableError,
    QueryValidationError,
    RagsondeError,
    StoreConnectionError,
    mask_secrets,
)

__all__ = [
    "STATUS_CODES",
    "Rule",
    "Where",
    "client_table",
    "edge_load_table",
    "edge_table",
    "translate",
    "translating",
]


@dataclass(frozen=True)
class Where:
    """Where a failure happened, for the message: the store (URL or folder) and collection."""

    store: str
    collection: str = ""
    secrets: tuple[str | None, ...] = ()

    def mask(self, text: str) -> str:
        return mask_secrets(text, self.secrets)


Rule = Callable[[BaseException, Where], RagsondeError]
_BASES = (BaseException, Exception, object)


def translate(table: Mapping[type, Rule], exc: BaseException, where: Where) -> RagsondeError | None:
    """The ragsonde error for ``exc`` by the first class of its MRO in ``table``; ``None`` when
    no class is mapped. ``Exception`` and ``BaseException`` match only themselves."""
    for cls in type(exc).__mro__:
        if cls in _BASES and cls is not type(exc):
            continue
        rule = table.get(cls)
        if rule is not None:
            return rule(exc, where)
    return None


@contextlib.contextmanager
def translating(table: Mapping[type, Rule], where: Where) -> Iterator[None]:
    """Translate mapped exceptions raised inside the block; ragsonde's own and unmapped ones
    pass through unchanged."""
    try:
        yield
    except RagsondeError:
        raise
    except Exception as e:
        err = translate(table, e, where)
        if err is None:
            raise
        raise err from e


# -- the verdicts ---------------------------------------------------------------------------
def _detail(exc: BaseException, where: Where) -> str:
    return where.mask(str(exc).strip().replace("\n", " ")) or type(exc).__name__


def _unreachable(exc: BaseException, where: Where) -> RagsondeError:
    return StoreConnectionError(
        f"Cannot use Qdrant at {where.store}: {_detail(exc, where)}. Is the server running and "
        "QDRANT_URL right? Unset QDRANT_URL to use the embedded store."
    )


def _local_or_unreachable(exc: BaseException, where: Where) -> RagsondeError:
    """A lock or runtime failure: in local mode (a folder), the folder is open in another
    process (qdrant-client lets one open it at a time and does not wait), not a server down."""
    if not where.store.startswith("path:"):
        return _unreachable(exc, where)
    return StoreConnectionError(
        f"Cannot use the qdrant-client folder {where.store}: {_detail(exc, where).rstrip('.')}. "
        "Local mode "
        "(QDRANT_URL a folder) lets one process open a folder at a time and does not wait: stop "
        "the other one that has it open (a `ragsonde serve`, another command, a framework's "
        "script), send the queries through that `ragsonde serve`, or load the collections into "
        "a Qdrant server and point QDRANT_URL at it."
    )


def _auth(status: object, where: Where) -> RagsondeError:
    return AuthError(
        f"Qdrant at {where.store} rejected the credentials ({status}). Check QDRANT_API_KEY."
    )


def _refused(exc: BaseException, where: Where) -> RagsondeError:
    detail = _detail(exc, where)
    return QueryValidationError(f"Qdrant at {where.store} refused the request: {detail}")


def _missing(exc: BaseException, where: Where) -> RagsondeError:
    if not where.collection:  # a 404 outside any collection: the URL is not a Qdrant API
        return _unreachable(exc, where)
    return CollectionNotFoundError(where.collection)


#: HTTP status -> rule; a status not listed falls back by class: 4xx validation, else connection.
STATUS_CODES: dict[int, Rule] = {
    401: lambda e, w: _auth("HTTP 401", w),
    403: lambda e, w: _auth("HTTP 403", w),
    404: _missing,
    408: _unreachable,
    429: _unreachable,
}


def _by_status(status: int | None, exc: BaseException, where: Where) -> RagsondeError:
    rule = STATUS_CODES.get(status) if status is not None else None
    if rule is not None:
        return rule(exc, where)
    if status is not None and 400 <= status < 500:
        return _refused(exc, where)
    return _unreachable(exc, where)


def _unexpected_response(exc: BaseException, where: Where) -> RagsondeError:
    status = getattr(exc, "status_code", None)
    return _by_status(status if isinstance(status, int) else None, exc, where)


def _http_status(exc: BaseException, where: Where) -> RagsondeError:
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return _by_status(status if isinstance(status, int) else None, exc, where)


def _handling(exc: BaseException, where: Where) -> RagsondeError:
    source = getattr(exc, "source", None)
    if isinstance(source, BaseException):
        inner = translate(client_table(), source, where)
        if inner is not None:
            return inner
    return _unreachable(exc, where)


def _grpc(exc: BaseException, where: Where) -> RagsondeError:
    import grpc  # type: ignore[import-untyped]

    code_of = getattr(exc, "code", None)
    code = code_of() if callable(code_of) else None
    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return _auth(f"gRPC {code.name}", where)
    if code is grpc.StatusCode.NOT_FOUND:
        return _missing(exc, where)
    if code in (
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.OUT_OF_RANGE,
    ):
        return _refused(exc, where)
    return _unreachable(exc, where)


def _bad_url(exc: BaseException, where: Where) -> RagsondeError:
    return QueryValidationError(
        f"QDRANT_URL {where.store} is not a usable URL: {_detail(exc, where)}.", field="qdrant_url"
    )


def _unsupported(exc: BaseException, where: Where) -> RagsondeError:
    return QueryValidationError(
        f"Qdrant at {where.store} does not support this request: {_detail(exc, where)}"
    )


@functools.cache
def client_table() -> dict[type, Rule]:
    """qdrant-client's table (built on first use: it imports qdrant-client, httpx and grpc)."""
    import grpc
    import httpx
    import portalocker.exceptions
    from qdrant_client.common.client_exceptions import QdrantException, ResourceExhaustedResponse
    from qdrant_client.http.exceptions import (
        ApiException,
        ResponseHandlingException,
        UnexpectedResponse,
    )

    return {
        UnexpectedResponse: _unexpected_response,
        ResponseHandlingException: _handling,
        ResourceExhaustedResponse: _unreachable,
        QdrantException: _unreachable,
        ApiException: _unreachable,
        httpx.HTTPStatusError: _http_status,
        httpx.InvalidURL: _bad_url,
        httpx.HTTPError: _unreachable,
        httpx.StreamError: _unreachable,
        httpx.CookieConflict: _unreachable,
        grpc.RpcError: _grpc,
        portalocker.exceptions.BaseLockException: _local_or_unreachable,
        NotImplementedError: _unsupported,
        RuntimeError: _local_or_unreachable,
        ValueError: _refused,
        OSError: _unreachable,
    }


# -- qdrant-edge ----------------------------------------------------------------------------
def _edge_os(exc: BaseException, where: Where) -> RagsondeError:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
    return StoreConnectionError(
        f"The embedded store at {where.store} could not be used for collection "
        f"'{where.collection}': {reason}. Check the folder exists and is writable (RAGSONDE_HOME)."
    )


def _edge_engine(exc: BaseException, where: Where) -> RagsondeError:
    return StoreConnectionError(
        f"The embedded Qdrant engine failed on collection '{where.collection}' at "
        f"{where.store}: {_detail(exc, where)}. If another program has this collection open, "
        "stop it, or use a Qdrant server (QDRANT_URL)."
    )


def _edge_unreadable(exc: BaseException, where: Where) -> RagsondeError:
    return CollectionUnreadableError(
        f"Collection '{where.collection}' cannot be opened at {where.store}: "
        f"{_detail(exc, where)}. If a program other than ragsonde has it open, stop that program; "
        f"if its files are damaged, restore them, or delete the collection (ragsonde collections "
        f"delete {where.collection}) and ingest it again.",
        collection=where.collection,
    )


@functools.cache
def edge_table() -> dict[type, Rule]:
    """qdrant-edge's table: its one exception class, the OS, and the lock file."""
    import portalocker.exceptions

    table: dict[type, Any] = {
        OSError: _edge_os,
        portalocker.exceptions.BaseLockException: _edge_os,
        Exception: _edge_engine,
    }
    return table


@functools.cache
def edge_load_table() -> dict[type, Rule]:
    """Loading a shard whose ragsonde lock this process holds: the engine failing there is the
    collection being unreadable (damaged, or open in a program outside ragsonde)."""
    return {**edge_table(), Exception: _edge_unreadable}
