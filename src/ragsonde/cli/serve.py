"""``ragsonde serve``: the HTTP API and the search page, on uvicorn."""

from __future__ import annotations

import copy
from typing import Annotated, Any

import typer

from ragsonde.cli._common import CollectionOpt, HomeOpt, cli_errors, settings_from_options
from ragsonde.cli.app import app

__all__ = ["serve"]


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
    port: Annotated[int, typer.Option(help="TCP port.", min=0, max=65535)] = 8000,
    collection: CollectionOpt = None,
    home: HomeOpt = None,
    log_level: Annotated[str, typer.Option(help="debug | info | warning | error")] = "info",
) -> None:
    """Serve the retrieval API (/v1/query, /docs) and the search page (/) over HTTP."""
    try:
        import uvicorn

        from ragsonde.server import create_app
    except ImportError as e:
        raise typer.BadParameter(
            f"The server needs its extras ({e.name} is missing): pip install 'ragsonde[server]'"
        ) from e
    settings = settings_from_options(collection=collection, home=home)
    uvicorn.run(
        create_app(settings),
        host=host,
        port=port,
        log_config=_log_config(log_level),
        log_level=log_level.lower(),
        access_log=False,  # the app logs every request itself, with its timing
        proxy_headers=False,
    )
