"""``GET /v1/health``: the server's effective search and index settings, the ones a query or an
evaluation that sets none of them runs with (behind the API key, like every /v1/ route)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends
from pydantic import BaseModel

from ragsonde.models.params import IndexParams, SearchParams
from ragsonde.server.state import ServerState, get_state

__all__ = ["ServerConfig", "router"]

router = APIRouter(tags=["health"])
State = Annotated[ServerState, Depends(get_state)]


class ServerConfig(BaseModel):
    """What this server runs by default: a query or an evaluation that sets none of these
    gets them (``GET /v1/health``)."""

    status: Literal["ok"] = "ok"
    collection: str
    model: str
    search: SearchParams
    index: IndexParams
    """The index parameters the server's settings ask for (they apply when a collection is
    built); each response's ``index`` says how the collection searched was built."""


@router.get(
    "/v1/health", response_model=ServerConfig, summary="The server's effective search settings"
)
async def health(state: State) -> ServerConfig:
    """The settings a query or an evaluation that names none runs with."""
    cfg = state.settings
    return ServerConfig(
        collection=cfg.collection,
        model=state.workspace.embedder_name,
        # the retriever's: a retriever handed to create_app may search with its own parameters
        # on top of the settings', and the page takes its default mode, top_k and threshold
        # from here
        search=state.retriever.search,
        index=cfg.index,
    )
