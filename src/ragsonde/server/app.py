"""The FastAPI application: :func:`create_app` wires routers, error handlers and middleware.

The app holds one :class:`~ragsonde.workspace.Workspace` (settings, store, embedder) and one
:class:`~ragsonde.retriever.Retriever` over it for its whole life. Start-up loads the model and
opens the store, so the first query pays no loading cost; shutdown closes what start-up opened.

The embedded store is opened long-lived: a collection the server has not queried for
``server_idle_release_s`` (or that another process waits for) is closed and unlocked, and the
next query reopens it, waiting up to ``lock_wait_s`` for a writer to finish. So ``ragsonde
ingest`` into the same home works while the server runs, and queries read what it wrote.
"""

from __future__ import annotations

import importlib
import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import Depends, FastAPI
from fastapi.openapi.utils import get_openapi
from fastapi.routing import APIRouter
from fastapi_offline import FastAPIOffline
from starlette.concurrency import run_in_threadpool

from ragsonde import __version__
from ragsonde.config import Settings, load_settings
from ragsonde.embedders import preload
from ragsonde.errors import RagsondeError
from ragsonde.models import BatchRequest, Query
from ragsonde.retriever import Retriever
from ragsonde.server.batcher import batching
from ragsonde.server.errors import install_error_handlers
from ragsonde.server.middleware import (
    BodyLimitMiddleware,
    HeadMiddleware,
    RequestLogMiddleware,
    TraceContextMiddleware,
)
from ragsonde.server.query_params import known_query_parameters
from ragsonde.server.security import require_api_key
from ragsonde.server.state import ServerState
from ragsonde.workspace import Workspace

__all__ = ["ROUTERS", "RouterSpec", "create_app"]

log = logging.getLogger("ragsonde.server")


@dataclass(frozen=True)
class RouterSpec:
    """One router of the app: a module exposing ``router: APIRouter``.

    ``protected``: its routes need the API key when RAGSONDE_API_KEY is set (the ``/v1/`` API).
    ``optional``: a module that may not exist yet is skipped.
    """

    module: str
    protected: bool
    optional: bool = False


#: Every router of the app, in order: the one place routes are added.
ROUTERS: tuple[RouterSpec, ...] = (
    RouterSpec("ragsonde.server.routes_health", protected=False),
    RouterSpec("ragsonde.server.routes_config", protected=True),
    RouterSpec("ragsonde.server.routes_query", protected=True),
    RouterSpec("ragsonde.server.routes_collections", protected=True),
    # EVAL ROUTER: the evaluation harness's `/v1/eval` endpoints (and the eval-reports view)
    # plug in here: a module `ragsonde.server.routes_eval` exposing `router: APIRouter`.
    RouterSpec("ragsonde.server.routes_eval", protected=True, optional=True),
    RouterSpec("ragsonde.server.routes_judge", protected=True),
    RouterSpec("ragsonde.server.routes_history", protected=True),
    RouterSpec("ragsonde.server.routes_traffic", protected=True),
    RouterSpec("ragsonde.server.routes_page", protected=False),
)


def _load_router(spec: RouterSpec) -> APIRouter | None:
    try:
        module = importlib.import_module(spec.module)
    except ModuleNotFoundError as e:
        if spec.optional and e.name == spec.module:
            return None
        raise
    router = getattr(module, "router", None)
    if not isinstance(router, APIRouter):
        raise TypeError(f"{spec.module} must define `router: APIRouter`")
    return router


def _warm_up(state: ServerState) -> None:
    """Load the model and open every collection; log (not raise) what fails, for /readyz."""
    ws = state.workspace
    try:
        dim = ws.embedder.dimension
        # The dimension may come from the model's files alone: embed once to load the model,
        # on this thread, past the batcher (see _lifespan).
        model = state.batcher.inner if state.batcher is not None else ws.embedder
        load_ms = preload(model)
        model.embed_queries(["warm-up"])
        state.model_loaded = True
        store = ws.store
        names = store.list_collections()
        for name in names:
            store.collection_info(name)
        log.info(
            "ready: model %s (%d-dim, loaded in %s), %s store with %d collection%s",
            ws.embedder_name,
            dim,
            "n/a" if load_ms is None else f"{load_ms:.0f} ms",
            store.backend,
            len(names),
            "" if len(names) == 1 else "s",
        )
    except RagsondeError as e:
        state.startup_error = e
        log.warning("not ready at start-up: %s: %s", e.code.value, e.message)


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    state: ServerState = app.state.ragsonde
    # On the event loop's thread (the main thread under `ragsonde serve`), before any request,
    # so the model's first forward pass runs here: when the micro-batcher's thread ran it
    # first, torch's OpenMP threads burned ~2.5x the CPU per query from then on (per-thread
    # CPU times under bench/bench_serve.py: 88 vs 36 ms per query).
    _warm_up(state)
    try:
        yield
    finally:
        jobs = getattr(app.state, "ragsonde_eval_jobs", None)
        if jobs is not None:  # the eval jobs' thread and worker process (routes_eval)
            await run_in_threadpool(jobs.close)
        if state.owns_workspace:  # closes the store it opened, and the batcher it made
            await run_in_threadpool(state.workspace.close)


def _contract_schemas() -> dict[str, Any]:
    """JSON Schemas of the request bodies, which routes read raw (see routes_query)."""
    out: dict[str, Any] = {}
    for model in (Query, BatchRequest):
        schema = model.model_json_schema(
            mode="validation", ref_template="#/components/schemas/{model}"
        )
        out.update(schema.pop("$defs", {}))
        out[model.__name__] = schema
    return out


def _hoist_defs(schema: dict[str, Any]) -> dict[str, Any]:
    """The document with each raw request body's ``$defs`` moved to ``components/schemas``.

    A body documented as a model's JSON Schema (``openapi_extra``: /v1/eval, /v1/traffic, the
    judge's) carries its own ``$defs``, and its ``#/$defs/SearchParams`` resolves against the
    document's root, where there is none: schemathesis skipped those bodies' ``search`` block
    as an unresolvable reference, and any client generator would stop there."""
    schemas = schema.setdefault("components", {}).setdefault("schemas", {})
    for item in schema.get("paths", {}).values():
        for operation in item.values():
            content = operation.get("requestBody", {}).get("content", {})
            for media in content.values():
                for name, body in media.get("schema", {}).pop("$defs", {}).items():
                    schemas.setdefault(name, body)
    out: dict[str, Any] = json.loads(
        json.dumps(schema).replace('"#/$defs/', '"#/components/schemas/')
    )
    return out


def _install_openapi(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            schemas = schema.setdefault("components", {}).setdefault("schemas", {})
            for name, body in _contract_schemas().items():
                schemas.setdefault(name, body)
            app.openapi_schema = _hoist_defs(schema)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented override


def _mount_mcp(app: FastAPI, state: ServerState) -> None:
    """The MCP tools at ``/mcp`` (:mod:`.mcp_mount`) when the ``mcp`` extra is installed."""
    try:
        from ragsonde.server.mcp_mount import mount_mcp
    except ModuleNotFoundError as e:
        if e.name is not None and e.name.split(".")[0] == "mcp":
            return
        raise
    mount_mcp(app, state)


def create_app(settings: Settings | None = None, retriever: Retriever | None = None) -> FastAPI:
    """The ragsonde HTTP service.

    ``retriever``: answer with this one and its workspace (tests, embedding apps), which its
    owner closes; by default the app builds a workspace from ``settings`` and closes what it
    opened on shutdown. ``settings`` default to the environment and ``ragsonde.toml``.
    Micro-batching (RAGSONDE_MICROBATCH) applies to the workspace the app builds; a retriever
    passed in embeds with its own embedder (which may be a
    :class:`~ragsonde.server.batcher.MicroBatchingEmbedder`).
    """
    if retriever is not None:
        state = ServerState(
            settings=settings or retriever.settings,
            workspace=retriever.workspace,
            retriever=retriever,
            owns_workspace=False,
        )
    else:
        settings = settings or load_settings()
        # Long-lived: it lets go of collections it is not using, so `ragsonde ingest` can write
        # into the same home while it serves (see ragsonde.store.edge). Its embedder is used
        # through the micro-batcher when the settings say so; closing the workspace stops it.
        ws = Workspace(settings, long_lived=True, wrap_embedder=batching(settings))
        state = ServerState(
            settings=settings,
            workspace=ws,
            retriever=Retriever(workspace=ws),
            owns_workspace=True,
        )
    settings = state.settings
    # fastapi-offline: FastAPI with /docs and /redoc served from bundled Swagger UI and ReDoc
    # files instead of a CDN, so the interactive docs work on a machine with no internet.
    app = FastAPIOffline(
        title="ragsonde",
        version=__version__,
        description="Retrieval over HTTP: the contract's Query in, Response out.",
        lifespan=_lifespan,
        # An API path with a trailing slash is a 404 in the contract's error shape, not a 307 to
        # another path (a job id such as "x%2F" used to redirect; found by schemathesis).
        redirect_slashes=False,
    )
    app.state.ragsonde = state
    install_error_handlers(app)
    for spec in ROUTERS:
        router = _load_router(spec)
        if router is not None:
            deps = [Depends(require_api_key)] if spec.protected else []
            if spec.protected:  # the /v1/ API; the page and the probes take what they get
                deps.append(Depends(known_query_parameters))
            app.include_router(router, dependencies=deps)
    _mount_mcp(app, state)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(HeadMiddleware)  # inside the log, which names the method as sent
    app.add_middleware(RequestLogMiddleware)
    app.add_middleware(TraceContextMiddleware)
    _install_openapi(app)
    return app
