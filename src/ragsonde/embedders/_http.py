"""HTTP for the remote embedders: retries with backoff, and one error translation.

401/403 → :class:`AuthError`; other 4xx, 5xx after retries, timeouts, refused connections and
malformed bodies → :class:`EmbeddingError`. httpx exceptions never escape this module. Messages
quote the API's own error text and never carry the key.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from ragsonde.errors import AuthError, EmbeddingError, mask_secrets

__all__ = ["RETRY_STATUSES", "JsonPoster"]

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_MAX_BACKOFF_S = 8.0


def _api_message(response: httpx.Response) -> str:
    """The API's own words: Cohere ``{"message"}``, OpenAI ``{"error": {"message"}}``."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(body, Mapping):
        err = body.get("error")
        if isinstance(err, Mapping) and isinstance(err.get("message"), str):
            return str(err["message"])
        if isinstance(err, str):
            return err
        if isinstance(body.get("message"), str):
            return str(body["message"])
    return response.text[:200]


class JsonPoster:
    """POSTs JSON to one API with retries; returns the decoded JSON body."""

    def __init__(
        self,
        api: str,
        base_url: str,
        *,
        headers: Mapping[str, str],
        secret: str | None,
        timeout_s: float,
        max_retries: int,
        key_hint: str,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.api = api
        self.base_url = base_url.rstrip("/")
        self._secret = secret
        self._max_retries = max_retries
        self._key_hint = key_hint
        self._sleep = sleep
        self._client = httpx.Client(headers=dict(headers), timeout=timeout_s)

    def _clean(self, text: str) -> str:
        return mask_secrets(text, [self._secret])

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        url = f"{self.base_url}{path}"
        attempt = 0
        while True:
            try:
                response = self._client.post(url, json=body)
            except httpx.TimeoutException as e:
                if attempt < self._max_retries:
                    attempt += 1
                    self._sleep(self._backoff(attempt, None))
                    continue
                raise EmbeddingError(
                    f"{self.api} at {self._clean(self.base_url)} timed out after "
                    f"{attempt + 1} attempts. Try again later, or raise the timeout "
                    "(RAGSONDE_EMBED_TIMEOUT_S)."
                ) from e
            except httpx.HTTPError as e:
                raise EmbeddingError(
                    f"Cannot reach {self.api} at {self._clean(self.base_url)}: "
                    f"{self._clean(str(e)) or type(e).__name__}. Check the base URL and network."
                ) from e
            if response.status_code in RETRY_STATUSES and attempt < self._max_retries:
                attempt += 1
                self._sleep(self._backoff(attempt, response.headers.get("retry-after")))
                continue
            return self._decode(response, attempts=attempt + 1)

    def _backoff(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(_MAX_BACKOFF_S, max(0.0, float(retry_after)))
            except ValueError:
                pass
        return float(min(_MAX_BACKOFF_S, 0.25 * 2 ** (attempt - 1) * (1 + random.random())))  # noqa: S311

    def _decode(self, response: httpx.Response, *, attempts: int) -> Any:
        status = response.status_code
        if status in (401, 403):
            raise AuthError(
                f"{self.api} rejected the API key (HTTP {status}: "
                f"{self._clean(_api_message(response))}). Check {self._key_hint}."
            )
        if status >= 400:
            tail = f" after {attempts} attempts" if status in RETRY_STATUSES else ""
            raise EmbeddingError(
                f"{self.api} answered HTTP {status}{tail}: {self._clean(_api_message(response))}"
            )
        try:
            return response.json()
        except ValueError as e:
            raise EmbeddingError(
                f"{self.api} sent a body that is not JSON (HTTP {status}): "
                f"{self._clean(response.text[:120])!r}"
            ) from e

    def close(self) -> None:
        self._client.close()
