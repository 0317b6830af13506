"""The deployment's ``max_top_k`` (the contract's 100) on every route that searches, not only
``/v1/query``: ``/v1/traffic`` replayed records at ``top_k`` 100,000 and ``/v1/eval`` ran with
it, each answer as large as the collection."""

from __future__ import annotations

from collections.abc import Sequence

from ragsonde.errors import QueryValidationError
from ragsonde.models.params import SearchParams
from ragsonde.server.errors import ApiError
from ragsonde.server.state import ServerState

__all__ = ["within_max_top_k"]


def within_max_top_k(
    state: ServerState, search: SearchParams | None, ks: Sequence[int] = ()
) -> None:
    """A 422 naming the field when ``search.top_k`` or a metric's cutoff ``k`` is over the
    server's ``max_top_k``."""
    most = state.settings.max_top_k
    asked = {"search.top_k": search.top_k if search is not None else 0, "k": max(ks, default=0)}
    for field, value in asked.items():
        if value > most:
            raise ApiError(
                QueryValidationError(
                    f"{field}: at most max_top_k = {most} on this server (got {value}).",
                    field=field,
                )
            )
