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


def _declared(route: Any) -> set[str] | None:
    """The query parameters ``route`` declares (None: not a FastAPI route). Read off its
    dependant on each request: a few names, and no cache keyed by ``id(route)``, which a
    route of a later app (tests build many) could reuse once the first is collected."""
    dependant = getattr(route, "dependant", None)
    return None if dependant is None else _names(dependant)


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
