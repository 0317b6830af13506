"""``ragsonde serve`` says where it listens: the address of the socket it bound (the port it got
with --port 0 too), as a URL to open."""

from __future__ import annotations

import socket

from ragsonde.cli.serve import _bind, address_line
from ragsonde.errors import QueryValidationError


def test_the_address_is_the_bound_sockets() -> None:
    sock = _bind("127.0.0.1", 0)
    try:
        port = sock.getsockname()[1]
        assert port > 0
        assert address_line(sock).startswith(f"ragsonde serves http://127.0.0.1:{port}/ ")
    finally:
        sock.close()
    anywhere = _bind("0.0.0.0", 0)
    try:
        line = address_line(anywhere)
        assert f"http://127.0.0.1:{anywhere.getsockname()[1]}/" in line
        assert "every interface" in line
    finally:
        anywhere.close()
    if socket.has_ipv6:
        try:
            six = _bind("::1", 0)
        except QueryValidationError:  # no IPv6 loopback on this machine
            return
        try:
            assert f"http://[::1]:{six.getsockname()[1]}/" in address_line(six)
        finally:
            six.close()
