"""``GET /healthz`` (the process is alive) and ``GET /readyz`` (a query would succeed: the model is
loaded, the store is reachable, and the default collection, when it exists, can be opened).

Neither needs the API key: orchestrators probe them. ``GET /v1/health``
(:mod:`ragsonde.server.routes_config`, behind the key) says what the server runs.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response as HttpResponse

from ragsonde.embedders import load_time
from ragsonde.errors import RagsondeError
from ragsonde.models import ErrorInfo
from ragsonde.server.errors import json_response
from ragsonde.server.state import ServerState, get_state

__all__ = ["Health", "Readiness", "router"]

router = APIRouter(tags=["health"])
State = Annotated[ServerState, Depends(get_state)]


class Health(BaseModel):
    status: Literal["ok"] = "ok"


class Readiness(BaseModel):
    """Whether the server can answer queries, and if not, why."""

    status: Literal["ready", "not_ready"]
    model: str
    model_loaded: bool
    #: How long the model took to load (once, at start-up); null for a remote embedder.
    model_load_ms: float | None = None
    store: str | None = None
    store_reachable: bool = False
    collections: int | None = None
    error: ErrorInfo | None = None


@router.get("/healthz", response_model=Health, summary="The process is alive")
async def healthz() -> Health:
    """Always 200 while the process serves requests."""
    return Health()


def check_ready(state: ServerState) -> Readiness:
    """Load the model if start-up could not, and ask the store for its collections."""
    ws = state.workspace
    report = Readiness(status="not_ready", model=ws.embedder_name, model_loaded=False)
    try:
        _ = ws.embedder.dimension
        state.model_loaded = report.model_loaded = True
        report.model_load_ms = load_time(ws.embedder)
        store = ws.store
        report.store = store.backend
        names = store.list_collections()
        report.collections = len(names)
        default = state.settings.collection
        if default in names:
            # What a query does first: open the collection. Another process holding the
            # embedded store's lock past lock_wait_s makes this fail, and the server not ready.
            store.collection_info(default)
        report.store_reachable = True
    except RagsondeError as e:
        report.error = ErrorInfo.from_exception(e)
    if report.model_loaded and report.store_reachable:
        report.status = "ready"
    return report


@router.get(
    "/readyz",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "Not ready, with the reason"}},
    summary="The model is loaded and the store is reachable",
)
async def readyz(state: State) -> HttpResponse:
    """200 when queries can be answered, 503 (with the reason) otherwise."""
    report = await run_in_threadpool(check_ready, state)
    return json_response(report, 200 if report.status == "ready" else 503)
