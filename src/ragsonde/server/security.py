"""API-key auth for the ``/v1/`` routes, on when ``RAGSONDE_API_KEY`` is set.

The key is read from ``Authorization: Bearer KEY`` or ``X-API-Key: KEY`` and compared in
constant time (on SHA-256 digests, so the key's length does not leak either).
"""

from __future__ import annotations

import hashlib
import hmac

from fastapi import Request
from pydantic import SecretStr
from starlette.datastructures import Headers

from ragsonde.errors import AuthError
from ragsonde.server.errors import ApiError
from ragsonde.server.state import get_state

__all__ = ["CHALLENGE", "key_refused", "presented_key", "require_api_key"]

CHALLENGE = {"WWW-Authenticate": 'Bearer realm="ragsonde"'}


def presented_key(headers: Headers) -> str | None:
    """The key the client sent, from ``Authorization: Bearer`` or ``X-API-Key``."""
    scheme, _, token = headers.get("authorization", "").strip().partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    key = headers.get("x-api-key", "").strip()
    return key or None


def _same(given: str, expected: str) -> bool:
    a = hashlib.sha256(given.encode()).digest()
    b = hashlib.sha256(expected.encode()).digest()
    return hmac.compare_digest(a, b)


def key_refused(headers: Headers, secret: SecretStr | None) -> AuthError | None:
    """Why the request's key is refused (none sent, or not ``secret``); None when it passes or
    no key is configured. The one check of the ``/v1/`` routes and of ``/mcp``."""
    if secret is None:
        return None
    given = presented_key(headers)
    if given is not None and _same(given, secret.get_secret_value()):
        return None
    what = "No API key was sent" if given is None else "The API key was not accepted"
    return AuthError(
        f"{what}. This server requires one on /v1/ routes and /mcp: send "
        "'Authorization: Bearer <key>' or 'X-API-Key: <key>' (the server's RAGSONDE_API_KEY)."
    )


def require_api_key(request: Request) -> None:
    """FastAPI dependency: pass when no key is configured or the right key was sent; else 401."""
    refused = key_refused(request.headers, get_state(request).settings.api_key)
    if refused is not None:
        raise ApiError(refused, status=401, headers=CHALLENGE)
