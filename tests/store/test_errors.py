"""The store's error boundary: every exception qdrant-client (and httpx, grpc, portalocker beneath
it) can raise maps to a contract code by type, and a bug in ragsonde is never disguised."""

from __future__ import annotations

import ast
import builtins
import contextlib
import http.server
import inspect
import socket
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import grpc
import httpx
import portalocker.exceptions
import pytest
import qdrant_client
import qdrant_client.common.client_exceptions as client_exceptions
import qdrant_client.http.exceptions as http_exceptions

from ragsonde.errors import (
    AuthError,
    CollectionNotFoundError,
    ErrorCode,
    QueryValidationError,
    RagsondeError,
    StoreConnectionError,
)
from ragsonde.store._errors import Where, client_table, edge_table, translate, translating
from ragsonde.store.client import QdrantClientStore
from ragsonde.store.edge import EdgeStore

WHERE = Where("http://qdrant.example:6333", "docs", ("sk-secret-key",))

#: Builtin exceptions qdrant-client raises that mean the caller (ragsonde) is wrong: they must
#: propagate as tracebacks, never become a contract error.
CALLER_BUGS = {TypeError, KeyError, AssertionError, AttributeError}
#: Raised only where ragsonde never calls: fastembed's missing-package error (``fastembed_common``,
#: ``embed/``), which qdrant-client raises for its own embedding helpers.
NEVER_CALLED = {ImportError}


def _library_classes() -> set[type[BaseException]]:
    """Every exception class in qdrant-client's exception modules, httpx and portalocker."""
    found: set[type[BaseException]] = set()
    for module in (http_exceptions, client_exceptions, httpx, portalocker.exceptions):
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__.split(".")[0] in (
                "qdrant_client",
                "httpx",
                "portalocker",
            ):
                found.add(obj)
    found.add(grpc.RpcError)
    return found


def _builtins_raised_by_qdrant_client() -> set[type[BaseException]]:
    """The builtin exception classes named in a ``raise`` anywhere in qdrant-client's source."""
    root = Path(qdrant_client.__file__).parent
    names: set[str] = set()
    for path in root.rglob("*.py"):
        if "grpc" in path.parts:  # generated protobuf stubs
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(target, ast.Name):
                    names.add(target.id)
    return {
        getattr(builtins, n)
        for n in names
        if isinstance(getattr(builtins, n, None), type)
        and issubclass(getattr(builtins, n), BaseException)
    }


def _instance(cls: type[BaseException]) -> BaseException:
    request = httpx.Request("GET", "http://qdrant.example:6333/collections")
    if issubclass(cls, http_exceptions.UnexpectedResponse):
        return cls(500, "Internal Server Error", b"{}", httpx.Headers())
    if issubclass(cls, http_exceptions.ResponseHandlingException):
        return cls(httpx.ConnectError("refused"))
    if issubclass(cls, client_exceptions.ResourceExhaustedResponse):
        return cls("slow down", 3)
    if issubclass(cls, httpx.HTTPStatusError):
        return cls("bad", request=request, response=httpx.Response(503, request=request))
    if issubclass(cls, httpx.RequestError):
        return cls("boom", request=request)
    for args in ((), ("boom",)):
        with contextlib.suppress(TypeError), warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # portalocker's FileToLarge
            return cls(*args)
    raise AssertionError(f"cannot build {cls}")


def test_the_walk_finds_the_classes_that_matter():
    classes = _library_classes()
    assert {
        http_exceptions.UnexpectedResponse,
        http_exceptions.ResponseHandlingException,
        client_exceptions.ResourceExhaustedResponse,
        httpx.ConnectTimeout,
        httpx.InvalidURL,
        portalocker.exceptions.AlreadyLocked,
    } <= classes
    assert len(classes) > 30
    assert {ValueError, RuntimeError, NotImplementedError} <= _builtins_raised_by_qdrant_client()


@pytest.mark.parametrize(
    "cls", sorted(_library_classes(), key=lambda c: f"{c.__module__}.{c.__qualname__}")
)
def test_every_library_exception_maps_to_a_contract_code(cls):
    exc = _instance(cls)
    err = translate(client_table(), exc, WHERE)
    assert isinstance(err, RagsondeError), cls
    assert err.code in ErrorCode


@pytest.mark.parametrize(
    "cls",
    sorted(
        _builtins_raised_by_qdrant_client() - CALLER_BUGS - NEVER_CALLED, key=lambda c: c.__name__
    ),
)
def test_every_builtin_qdrant_client_raises_maps_to_a_contract_code(cls):
    err = translate(client_table(), _instance(cls), WHERE)
    assert isinstance(err, RagsondeError), cls


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (400, QueryValidationError),
        (401, AuthError),
        (403, AuthError),
        (404, CollectionNotFoundError),
        (408, StoreConnectionError),
        (409, QueryValidationError),
        (422, QueryValidationError),
        (429, StoreConnectionError),
        (500, StoreConnectionError),
        (502, StoreConnectionError),
        (503, StoreConnectionError),
        (None, StoreConnectionError),
    ],
)
def test_http_status_decides_the_code(status, expected):
    body = b'{"status": {"error": "key sk-secret-key is wrong"}}'
    exc = http_exceptions.UnexpectedResponse(status, "", body, httpx.Headers())
    err = translate(client_table(), exc, WHERE)
    assert type(err) is expected
    assert "sk-secret-key" not in str(err)
    wrapped = translate(
        client_table(),
        httpx.HTTPStatusError(
            "x",
            request=httpx.Request("GET", "http://q"),
            response=httpx.Response(status or 599, request=httpx.Request("GET", "http://q")),
        ),
        WHERE,
    )
    assert type(wrapped) is (expected if status is not None else StoreConnectionError)


def test_a_404_outside_a_collection_means_the_url_is_wrong():
    exc = http_exceptions.UnexpectedResponse(404, "Not Found", b"", httpx.Headers())
    err = translate(client_table(), exc, Where("http://q:6333", ""))
    assert isinstance(err, StoreConnectionError)


def test_wrapped_httpx_errors_are_classified_by_their_source():
    timeout = http_exceptions.ResponseHandlingException(httpx.ReadTimeout("slow"))
    assert isinstance(translate(client_table(), timeout, WHERE), StoreConnectionError)
    bad_url = http_exceptions.ResponseHandlingException(httpx.InvalidURL("no host"))
    assert isinstance(translate(client_table(), bad_url, WHERE), QueryValidationError)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (grpc.StatusCode.UNAUTHENTICATED, AuthError),
        (grpc.StatusCode.PERMISSION_DENIED, AuthError),
        (grpc.StatusCode.NOT_FOUND, CollectionNotFoundError),
        (grpc.StatusCode.INVALID_ARGUMENT, QueryValidationError),
        (grpc.StatusCode.UNAVAILABLE, StoreConnectionError),
        (grpc.StatusCode.DEADLINE_EXCEEDED, StoreConnectionError),
    ],
)
def test_grpc_status_decides_the_code(code, expected):
    class _Rpc(grpc.RpcError):
        def code(self) -> grpc.StatusCode:
            return code

    assert type(translate(client_table(), _Rpc(), WHERE)) is expected


@pytest.mark.parametrize("bug", [TypeError("x"), AttributeError("x"), KeyError("x"), NameError()])
def test_a_bug_in_ragsonde_is_not_disguised_as_a_contract_error(bug):
    assert translate(client_table(), bug, WHERE) is None
    assert translate(edge_table(), bug, WHERE) is None
    with pytest.raises(type(bug)), translating(client_table(), WHERE):
        raise bug


def test_edge_maps_its_engine_exception_class_exactly():
    assert isinstance(translate(edge_table(), Exception("engine"), WHERE), StoreConnectionError)
    assert isinstance(
        translate(edge_table(), PermissionError(13, "no"), WHERE), StoreConnectionError
    )

    class Subclass(Exception):
        pass

    assert translate(edge_table(), Subclass("ours"), WHERE) is None


# -- the real client against real sockets ---------------------------------------------------
@contextlib.contextmanager
def _http_server(status: int) -> Iterator[str]:
    """A loopback HTTP server answering every request with ``status`` and a Qdrant-like body."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            body = b'{"status": {"error": "nope"}, "time": 0.0}'
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    ("status", "code"),
    [
        (401, ErrorCode.AUTH_ERROR),
        (403, ErrorCode.AUTH_ERROR),
        (404, ErrorCode.COLLECTION_NOT_FOUND),
        (400, ErrorCode.VALIDATION_ERROR),
        (500, ErrorCode.CONNECTION_ERROR),
        (503, ErrorCode.CONNECTION_ERROR),
    ],
)
@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")
def test_real_client_real_http_answers(status, code):
    with _http_server(status) as url:
        store = QdrantClientStore(url, api_key="sk-secret-key", timeout_s=2)
        with pytest.raises(RagsondeError) as caught:
            store.collection_info("docs")
        store.close()
    assert caught.value.code is code
    assert "sk-secret-key" not in str(caught.value)


def test_real_client_nothing_listening_is_a_connection_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    store = QdrantClientStore(f"http://127.0.0.1:{port}", timeout_s=1)
    with pytest.raises(StoreConnectionError, match=f"127.0.0.1:{port}"):
        store.list_collections()
    store.close()


def test_edge_bug_inside_the_boundary_propagates(tmp_path, monkeypatch):
    store = EdgeStore(tmp_path)
    store.create_collection("c", 3)

    def broken(*args: object, **kwargs: object) -> None:
        raise TypeError("a bug in ragsonde")

    monkeypatch.setattr("ragsonde.store._convert.to_filter", broken)
    with pytest.raises(TypeError, match="a bug in ragsonde"):
        store.count("c", {"url": ["x"]})
    store.close()
