"""ragsonde over the Model Context Protocol, with the official SDK (the ``mcp`` extra).

Two directions:

- **a server** (``ragsonde mcp`` over stdio; ``/mcp`` in ``ragsonde serve`` over streamable
  HTTP): search, evaluate, explain_miss, failing_queries, history_list, history_diff,
  inspect_collection, config, and with ``--allow-write`` ingest
  (:func:`ragsonde.mcp.server.build_server`; mounted by :mod:`ragsonde.server.mcp_mount`);
- **a target** (``ragsonde eval BENCH --mcp CMD --tool NAME``): any MCP search tool evaluated
  like a collection (:mod:`ragsonde.mcp.target`).

The package is named after the protocol; absolute imports keep ``import mcp`` meaning the SDK.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragsonde.config import Settings

__all__ = ["serve_stdio"]


def serve_stdio(
    settings: Settings,
    *,
    roots: Sequence[Path] | None = None,
    allow_write: bool = False,
    config_file: Path | None = None,
) -> None:
    """Serve the tools over stdio until the client closes the pipe, or SIGTERM: then the
    signal is raised again once the server has stopped, to the handler the caller had."""
    from ragsonde.mcp.roots import Roots
    from ragsonde.mcp.server import build_server
    from ragsonde.mcp.tools import Room
    from ragsonde.workspace import Workspace

    # long-lived: embedded collections it is not using are let go, so `ragsonde ingest` and
    # `ragsonde eval` can run beside an agent's session (see ragsonde.store.edge)
    with Workspace(settings, long_lived=True) as ws:
        room = Room(
            ws,
            roots=Roots(list(roots)) if roots else None,
            allow_write=allow_write,
            config_file=config_file,
        )
        _warm_up(ws)
        import anyio

        from ragsonde.mcp.stdio import run_stdio

        if anyio.run(run_stdio, build_server(room)):
            # SIGTERM stopped the server; the process ends as the signal says, out of the
            # event loop: the command line's handler bounds the cleanup that follows
            import signal

            signal.raise_signal(signal.SIGTERM)


def _warm_up(ws: object) -> None:
    """Load the model on this (the main) thread before any call, as ``ragsonde serve`` does: the
    first search pays no loading cost. A model that cannot load is left to fail the first call
    that needs it, as a tool error."""
    import logging

    from ragsonde.errors import RagsondeError
    from ragsonde.workspace import Workspace

    assert isinstance(ws, Workspace)
    try:
        ws.embedder.embed_queries(["warm-up"])
    except RagsondeError as e:
        logging.getLogger("ragsonde.mcp").warning("model not loaded: %s", e.message)
