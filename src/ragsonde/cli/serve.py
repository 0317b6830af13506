"""``ragsonde serve``: the HTTP API and the search page, on uvicorn."""

from __future__ import annotations

import copy
import socket
from enum import StrEnum
from typing import Annotated, Any

import typer

from ragsonde.cli._common import (
    CollectionOpt,
    ConfigOpt,
    HomeOpt,
    VectorOpt,
    cli_errors,
    console,
    err_console,
    settings_from_options,
)
from ragsonde.cli.app import app
from ragsonde.errors import QueryValidationError

__all__ = ["KEEP_ALIVE_S", "LogLevel", "serve"]

#: Seconds an idle keep-alive connection stays open. uvicorn's default (5 s) equals the idle
#: expiry of common client pools (httpx's, for one): a client then reuses a connection at the
#: moment the server closes it, and the request fails with no answer (3 of 2,298 requests at
#: 130 % load in ``bench/bench_serve.py``; none at 75 s). It must outlast the clients' and any
#: load balancer's idle timeout (AWS's default is 60 s).
KEEP_ALIVE_S = 75


class LogLevel(StrEnum):
    """How much the server logs (``info``: one line per request and per query)."""

    critical = "critical"
    error = "error"
    warning = "warning"
    info = "info"
    debug = "debug"


def _bind(host: str, port: int) -> socket.socket:
    """The listening socket, bound now: a busy port fails in milliseconds, before the model
    loads, and nothing can take the port between this check and the server's start."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise QueryValidationError(
            f"Cannot listen on {host}:{port}: {e.strerror or e}. Another process probably uses "
            "the port: stop it, or pick another with --port.",
            field="port",
        ) from e
    return sock


def address_line(sock: socket.socket) -> str:
    """Where the server listens, as a URL to open (the port the socket got, --port 0 too)."""
    host, port = sock.getsockname()[:2]
    shown = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)  # noqa: S104 - only shown
    netloc = f"[{shown}]:{port}" if ":" in shown else f"{shown}:{port}"
    anywhere = " (listening on every interface)" if shown != host else ""
    return f"ragsonde serves http://{netloc}/ (the web page; API docs at /docs){anywhere}"


def _log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging, plus the server's own request and query lines on the same handler."""
    from uvicorn.config import LOGGING_CONFIG

    config: dict[str, Any] = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["ragsonde"] = {"handlers": ["default"], "level": level.upper()}
    return config


@app.command()
@cli_errors
def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", min=1, max=65535)] = 8000,
    collection: CollectionOpt = None,
    vector: VectorOpt = None,
    home: HomeOpt = None,
    config_file: ConfigOpt = None,
    log_level: Annotated[
        LogLevel, typer.Option(case_sensitive=False, help="How much to log.")
    ] = LogLevel.info,
) -> None:
    """Serve the retrieval API (/v1/query, docs at /docs) and the search page (/) over HTTP.

    The model is loaded once at start-up. Embedded collections are opened per request and let go
    when idle, so `ragsonde ingest` into the same home works while it serves. Set
    RAGSONDE_API_KEY to require a key on every /v1/ route.
    """
    try:
        import uvicorn

        from ragsonde.server import create_app
    except ImportError as e:
        err_console.print(
            f"The server needs its extras ({e.name} is missing): pip install 'ragsonde[server]'",
            markup=False,
        )
        raise typer.Exit(1) from e
    settings = settings_from_options(
        config=config_file, collection=collection, home=home, vector=vector
    )
    sock = _bind(host, port)
    config = uvicorn.Config(
        create_app(settings),
        host=host,
        port=port,
        log_config=_log_config(log_level.value),
        log_level=log_level.value,
        access_log=False,  # the app logs every request itself, with its timing
        timeout_keep_alive=KEEP_ALIVE_S,
    )
    server = uvicorn.Server(config)
    console.print(address_line(sock), soft_wrap=True, markup=False, highlight=False)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    if not server.started:
        raise typer.Exit(3)  # as uvicorn.run: the app failed to start (its log says why)
