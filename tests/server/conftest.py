"""A real ragsonde server on a loopback port, over a real Edge store and the real model.

``run_server`` starts uvicorn in a background thread on a socket bound to 127.0.0.1:0 and yields
its base URL; tests talk to it with httpx, as a client would.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
import uvicorn
from fastapi import FastAPI

from ragsonde.config import Settings
from ragsonde.retriever import Retriever
from ragsonde.server import create_app
from ragsonde.store import PointRecord, open_store
from tests.conftest import DOCS
from tests.retriever.conftest import fill

#: A stored chunk that is an XSS attempt: the page must show it as text and run nothing.
EVIL_TEXT = "<img src=x onerror=alert(1)>"
EVIL = PointRecord(
    id="99",
    vector=None,
    payload={
        "text": EVIL_TEXT,
        "url": "javascript:alert(2)",
        "title": "<script>alert(3)</script>",
        "section": "<b onmouseover=alert(4)>Untrusted</b>",
        "chunk_index": 0,
        "doc_id": "evil",
    },
)

#: The body limit the test servers run with (small, so an oversized body is cheap to send).
MAX_BODY = 16_384


@contextmanager
def run_server(app: FastAPI) -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free loopback port; yield ``http://127.0.0.1:PORT``."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_config=None, access_log=False, ws="none", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        sock.close()


def closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def server_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    home = tmp_path_factory.mktemp("server") / "home"
    return Settings(home=home, collection="docs", max_body_bytes=MAX_BODY)


@pytest.fixture(scope="session")
def filled_store(server_settings, embedder) -> Iterator[object]:
    """The robotics docs plus the XSS chunk in ``docs``; an 8-dimensional ``small`` collection."""
    store = open_store(server_settings)
    fill(store, embedder)
    vec = embedder.embed_documents([EVIL_TEXT])[0].tolist()
    store.upsert("docs", [PointRecord(id=EVIL.id, vector=vec, payload=EVIL.payload)])
    store.create_collection("small", 8)
    yield store
    store.close()


@pytest.fixture(scope="session")
def retriever(server_settings, filled_store, embedder) -> Retriever:
    return Retriever(server_settings, store=filled_store, embedder=embedder)


@pytest.fixture(scope="session")
def base_url(server_settings, retriever) -> Iterator[str]:
    """The main server: no API key."""
    with run_server(create_app(server_settings, retriever)) as url:
        yield url


@pytest.fixture
def api(base_url) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=30) as client:
        yield client


@pytest.fixture(scope="session")
def docs_count() -> int:
    return len(DOCS) + 1
