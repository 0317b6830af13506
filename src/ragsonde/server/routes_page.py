"""The search page at ``/``: plain HTML, CSS and JavaScript shipped in the package.

No CDN and no build step, so it works offline. A strict Content-Security-Policy allows only the
page's own script and stylesheet: even if a payload value slipped into the markup, no inline
script or event handler could run.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from starlette.responses import FileResponse, Response

from ragsonde.errors import QueryValidationError
from ragsonde.server.errors import ApiError

__all__ = ["STATIC", "router"]

#: Where the page's files live inside the package.
STATIC = Path(__file__).resolve().parent / "static"

#: The files ``/static/`` serves, and their types. Nothing else is reachable.
_ASSETS = {
    "app.css": "text/css",
    "app.js": "text/javascript",
    "judge.js": "text/javascript",
    "history.js": "text/javascript",
    "traffic.js": "text/javascript",
}

_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}

router = APIRouter(include_in_schema=False)


@router.get("/")
async def index() -> FileResponse:
    """The search page."""
    return FileResponse(STATIC / "index.html", media_type="text/html", headers=_HEADERS)


@router.get("/favicon.ico")
async def favicon() -> Response:
    """No icon: the page names none, but a browser asks for one for every other document it
    opens (an evaluation report, the API docs), and a 404 is an error in its console."""
    return Response(status_code=204, headers={"Cache-Control": "max-age=86400"})


@router.get("/static/{name}")
async def asset(name: str) -> FileResponse:
    """The page's stylesheet and script."""
    media_type = _ASSETS.get(name)
    if media_type is None:
        raise ApiError(QueryValidationError(f"No static file '{name}'."), status=404)
    return FileResponse(STATIC / name, media_type=media_type, headers=_HEADERS)
