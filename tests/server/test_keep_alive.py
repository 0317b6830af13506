"""A real ``ragsonde serve`` keeps an idle connection open past a client pool's idle expiry, so
a client that reuses it gets an answer, not a closed socket (uvicorn's 5 s default raced
httpx's 5 s expiry under load: requests failed with no answer)."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.support import serve_process

pytestmark = pytest.mark.slow  # starts a server process

REQUEST = b"GET /healthz HTTP/1.1\r\nHost: ragsonde\r\n\r\n"


def _answer(sock: socket.socket) -> bytes:
    sock.sendall(REQUEST)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            return data  # closed by the server
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += sock.recv(4096)
    return head


def test_an_idle_connection_outlives_a_client_pool_s_expiry(tmp_path: Path) -> None:
    with serve_process(tmp_path / "home") as url:
        address = urlparse(url)
        with socket.create_connection((address.hostname, address.port), timeout=30) as sock:
            assert _answer(sock).startswith(b"HTTP/1.1 200")
            time.sleep(6.5)  # past uvicorn's default keep-alive (5 s) and httpx's expiry (5 s)
            assert _answer(sock).startswith(b"HTTP/1.1 200"), "the server closed the connection"
