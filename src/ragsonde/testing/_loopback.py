"""What the fake APIs share: a JSON-over-HTTP server on a free loopback port, in a daemon thread.

A fake supplies one function, ``answer(path, headers, body) -> (status, payload, headers)``; the
payload is JSON-encoded unless it is already bytes (a malformed body on purpose).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["Answer", "base_url", "serve", "shutdown"]

#: ``(path, headers, parsed JSON body or None) -> (status, payload, extra headers)``.
Answer = Callable[[str, dict[str, str], Any], tuple[int, Any, dict[str, str]]]


def serve(answer: Answer) -> ThreadingHTTPServer:
    """Answer every ``POST`` with ``answer`` on 127.0.0.1 (a free port) until :func:`shutdown`."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = None
            status, payload, headers = answer(self.path, dict(self.headers), body)
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client gave up first (a timeout, a hang): nobody to answer
                return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def base_url(server: ThreadingHTTPServer) -> str:
    """``http://127.0.0.1:PORT`` of a server from :func:`serve`."""
    host, port = server.server_address[:2]
    return f"http://{host!s}:{port}"


def shutdown(server: ThreadingHTTPServer) -> None:
    """Stop serving and release the port (requests held on purpose must be released first)."""
    server.shutdown()
    server.server_close()


def take_fault(faults: Any, name: str, lock: threading.Lock) -> bool:
    """Use up one of ``faults.<name>``, a countdown of injected failures; whether one was left."""
    with lock:
        left: int = getattr(faults, name)
        if left > 0:
            setattr(faults, name, left - 1)
            return True
        return False
