"""What the running server holds: its workspace, the one retriever, and readiness."""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import HTTPConnection

from ragsonde.config import Settings
from ragsonde.errors import RagsondeError
from ragsonde.retriever import Retriever
from ragsonde.server.batcher import MicroBatchingEmbedder
from ragsonde.workspace import Workspace

__all__ = ["ServerState", "get_state"]


@dataclass
class ServerState:
    """Shared by every request; set on ``app.state.ragsonde`` by :func:`create_app`.

    ``settings``: the server's own (API key, body limit, default collection). ``workspace``: the
    store and the embedder; ``retriever`` answers with it. ``owns_workspace``: the app built the
    workspace, and closes what it opened on shutdown.
    """

    settings: Settings
    workspace: Workspace
    retriever: Retriever
    owns_workspace: bool
    model_loaded: bool = False
    startup_error: RagsondeError | None = None

    @property
    def batcher(self) -> MicroBatchingEmbedder | None:
        """The micro-batcher in front of the model, in a workspace the app built (``None``: it
        embeds directly, its embedder setting is bad, or it was handed a retriever)."""
        if not self.owns_workspace:
            return None
        try:  # builds the embedder object only: its model loads on first use
            embedder = self.workspace.embedder
        except RagsondeError:  # a bad setting surfaces at warm-up and in /readyz
            return None
        return embedder if isinstance(embedder, MicroBatchingEmbedder) else None


def get_state(conn: HTTPConnection) -> ServerState:
    """The server state of the app handling ``conn`` (a FastAPI dependency)."""
    state = getattr(conn.app.state, "ragsonde", None)
    if not isinstance(state, ServerState):
        raise RuntimeError("the app was not built by ragsonde.server.create_app")
    return state
