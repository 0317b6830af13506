"""A query-string parameter a route does not declare is refused, as an unknown body field is.

FastAPI drops such a parameter without a word, so a typo answered another question:
``GET /v1/history/runs?colection=docs`` listed every collection's runs with a 200, and
``/v1/collections/docs?samples=10`` sampled the default number of points. Every ``/v1/`` route
now answers a 422 VALIDATION_ERROR naming the parameter and the ones the route takes.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request

from ragsonde.errors import QueryValidationError
from ragsonde.models import printable
from ragsonde.server.errors import ApiError

__all__ = ["known_query_parameters"]

#: The parameters each route declares, by route (routes live as long as the app).
_KNOWN: dict[int, frozenset[str]] = {}


def _declared(route: Any) -> frozenset[str] | None:
    dependant = getattr(route, "dependant", None)
    if dependant is None:
        return None
    known = _KNOWN.get(id(route))
    if known is None:
        known = _KNOWN[id(route)] = frozenset(_names(dependant))
    return known


def _names(dependant: Any) -> set[str]:
    """The query parameters of a route's dependant and of its dependencies', by wire name."""
    names = {str(p.alias) for p in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _names(sub)
    return names


async def known_query_parameters(request: Request) -> None:
    """Refuse the request when its query string names a parameter its route does not take."""
    known = _declared(request.scope.get("route"))
    if known is None:
        return
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        takes = ", ".join(sorted(known)) or "none"
        shown = ", ".join(repr(printable(u)[:100]) for u in unknown[:5])
        raise ApiError(
            QueryValidationError(
                f"Unknown query parameter {shown} for {request.method} {request.url.path}: "
                f"this route takes {takes}.",
                field=printable(unknown[0])[:100],
            )
        )
