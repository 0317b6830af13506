"""``GET /v1/collections`` and ``GET /v1/collections/{name}``: what ``ragsonde inspect`` shows."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from ragsonde.errors import RagsondeError
from ragsonde.models import SearchMode
from ragsonde.models.store import COLLECTION_NAME_PATTERN
from ragsonde.server.errors import ERROR_RESPONSES, ApiError
from ragsonde.server.state import ServerState, get_state
from ragsonde.store.inspect import CollectionReport

__all__ = ["CollectionInUse", "CollectionList", "CollectionSummary", "router"]

router = APIRouter(prefix="/v1", tags=["collections"])
State = Annotated[ServerState, Depends(get_state)]


class CollectionSummary(BaseModel):
    name: str
    points_count: int
    dimension: int
    distance: str
    sparse: bool
    modes: list[SearchMode]
    """The search modes it answers (as ``ragsonde collections`` lists them): dense, and sparse
    and hybrid when its sparse vector is a BM25 ragsonde can query. The page offers these."""


class CollectionInUse(BaseModel):
    """An embedded collection another process holds: nothing of it could be read."""

    name: str
    holder: str
    """Who, as its lock file says: ``pid N on host H``, else ``another process``."""


class CollectionUnreadable(BaseModel):
    """A collection whose files could not be read (a damaged ``edge_config.json``)."""

    name: str
    reason: str


class CollectionList(BaseModel):
    """Every collection in the store, and the one queries use when they name none."""

    default: str
    backend: str
    collections: list[CollectionSummary]
    """The collections this server could read."""
    in_use: list[CollectionInUse] = []
    """Embedded collections another process holds (``ragsonde collections`` shows them as "in
    use by"): one of them made the whole listing a 503 that named only it."""
    unreadable: list[CollectionUnreadable] = []
    """Collections whose files could not be read, and why: one of them made the listing a
    500."""


#: How long the listing waits for another process to let go of a collection it holds: a peer
#: ``ragsonde serve`` or ``mcp`` lets go within its 0.2 s poll; a holder that keeps it (an
#: ingest, a notebook) cost ``lock_wait_s`` (10 s) a collection, and a server stopped meanwhile
#: waited for that request before it could exit.
LISTING_WAIT_S = 1.0


def _list(state: ServerState) -> CollectionList:
    from ragsonde.catalog.listing import list_entries

    store = state.workspace.store
    summaries, held, unreadable = [], [], []
    for e in list_entries(store, wait_s=LISTING_WAIT_S):
        if e.in_use is not None:
            held.append(CollectionInUse(name=e.name, holder=e.in_use))
            continue
        if e.unreadable is not None:
            unreadable.append(CollectionUnreadable(name=e.name, reason=e.unreadable))
            continue
        assert e.points is not None  # read: only a held entry leaves these unset
        assert e.dimension is not None
        assert e.distance is not None
        summaries.append(
            CollectionSummary(
                name=e.name,
                points_count=e.points,
                dimension=e.dimension,
                distance=e.distance,
                sparse=e.sparse_vector is not None,
                modes=e.modes,
            )
        )
    return CollectionList(
        default=state.settings.collection,
        backend=store.backend,
        collections=summaries,
        in_use=held,
        unreadable=unreadable,
    )


def _inspect(state: ServerState, name: str, sample: int) -> CollectionReport:
    return state.workspace.inspect(name, sample=sample, mapping=state.retriever.mapping)


@router.get(
    "/collections",
    response_model=CollectionList,
    responses=ERROR_RESPONSES,
    summary="List the collections",
)
async def list_collections(state: State) -> CollectionList:
    """Name, size and vectors of every collection in the store; those another process holds
    (an embedded store shared with `ragsonde ingest` or an agent's `ragsonde mcp`) under
    ``in_use``, with who holds them."""
    try:
        return await run_in_threadpool(_list, state)
    except RagsondeError as e:
        raise ApiError(e) from e


@router.get(
    "/collections/{name}",
    response_model=CollectionReport,
    responses=ERROR_RESPONSES,
    summary="Describe one collection (what `ragsonde inspect` shows)",
)
async def describe_collection(
    state: State,
    name: Annotated[
        str,
        Path(
            min_length=1,
            max_length=255,
            json_schema_extra={"pattern": COLLECTION_NAME_PATTERN},  # checked by the store
        ),
    ],
    sample: Annotated[int, Query(ge=1, le=10_000, description="Payloads to sample.")] = 1000,
) -> CollectionReport:
    """Vectors, point counts, payload fields with fill rates, and the payload mapping that fits."""
    try:
        return await run_in_threadpool(_inspect, state, name, sample)
    except RagsondeError as e:
        raise ApiError(e, collection=name) from e
