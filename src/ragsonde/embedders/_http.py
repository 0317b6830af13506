"""HTTP for the remote embedders: retries within one deadline, and one error translation.

Retries (429 and 5xx answers, timeouts) follow the one policy in :mod:`ragsonde.retry`, within
one overall deadline per call (an embedder's ``RAGSONDE_EMBED_DEADLINE_S``, the chat client's
``RAGSONDE_LLM_DEADLINE_S``), so a hung API holds a caller for about that long, never attempts
x timeout. A call that runs out of time names the settings that raise its limits: the caller
says which (``deadline_setting``, ``timeout_setting``), since the poster is shared.
401/403 → :class:`AuthError`; other 4xx, 5xx after retries, timeouts, refused connections and
malformed bodies → :class:`EmbeddingError` (or the ``failure`` type a caller names: the chat
client of the labelling tools says :class:`~ragsonde.errors.LlmError`).
httpx exceptions never escape this module. Messages quote the API's own error text and never
carry the key.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import httpx

from ragsonde.errors import AuthError, EmbeddingError, RagsondeError, mask_secrets
from ragsonde.retry import (
    RetriesExhausted,
    RetryPolicy,
    TryAgain,
    call_with_retries,
    parse_retry_after,
)

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
    """POSTs JSON to one API with retries within a deadline; returns the decoded JSON body."""

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
        deadline_setting: str,
        timeout_setting: str | None,
        deadline_s: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        failure: type[RagsondeError] = EmbeddingError,
    ) -> None:
        self.api = api
        #: What a failed call raises (every failure but a refused key, which is AuthError).
        self.failure = failure
        self.base_url = base_url.rstrip("/")
        self._secret = secret
        self._timeout_s = timeout_s
        self._max_retries = max_retries
        self._key_hint = key_hint
        #: The settings a user raises when calls run out of time (the caller's own, not text
        #: matched afterwards: the chat client once advised the embedding variables).
        self._raise = " / ".join(s for s in (timeout_setting, deadline_setting) if s)
        self._raise_deadline = deadline_setting
        self._sleep = sleep
        #: Seconds one embed call may take across all its requests and retries.
        self.deadline_s = deadline_s
        self._client = httpx.Client(headers=dict(headers), timeout=timeout_s)

    def _clean(self, text: str) -> str:
        return mask_secrets(text, [self._secret])

    def deadline(self) -> float:
        """The monotonic time by which a call starting now must be done."""
        return time.monotonic() + self.deadline_s

    def post(self, path: str, body: Mapping[str, Any], *, deadline: float | None = None) -> Any:
        """POST ``body``; ``deadline`` (monotonic, from :meth:`deadline`) bounds the retries of
        every request of one embed call together (default: this request alone)."""
        url = f"{self.base_url}{path}"
        left = (deadline if deadline is not None else self.deadline()) - time.monotonic()
        policy = RetryPolicy(
            retries=self._max_retries, deadline_s=max(0.0, left), max_wait_s=_MAX_BACKOFF_S
        )

        def attempt(remaining: float | None) -> httpx.Response:
            timeout = self._timeout_s if remaining is None else min(self._timeout_s, remaining)
            try:
                response = self._client.post(url, json=body, timeout=timeout)
            except httpx.TimeoutException as e:
                raise TryAgain(f"timed out after {timeout:.3g} s") from e
            if response.status_code in RETRY_STATUSES:
                raise TryAgain(
                    f"HTTP {response.status_code}",
                    retry_after=parse_retry_after(response.headers.get("retry-after")),
                    outcome=response,
                )
            return response

        try:
            response = call_with_retries(attempt, policy, sleep=self._sleep)
        except RetriesExhausted as e:
            last = e.last.outcome
            if isinstance(last, httpx.Response) and not e.deadline_hit:
                return self._decode(last, attempts=e.attempts)
            if isinstance(last, httpx.Response):
                raise self.failure(
                    f"{self.api} answered HTTP {last.status_code} and did not recover within "
                    f"the {self.deadline_s:g} s deadline ({e.attempts} attempts): "
                    f"{self._clean(_api_message(last))}. Try again later, or raise "
                    f"{self._raise_deadline}."
                ) from e
            raise self.failure(
                f"{self.api} at {self._clean(self.base_url)} timed out after {e.attempts} "
                f"attempts in {e.elapsed_s:.1f} s (deadline {self.deadline_s:g} s). Try again "
                f"later, or raise {self._raise}."
            ) from e
        except httpx.HTTPError as e:
            raise self.failure(
                f"Cannot reach {self.api} at {self._clean(self.base_url)}: "
                f"{self._clean(str(e)) or type(e).__name__}. Check the base URL and network."
            ) from e
        return self._decode(response, attempts=1)

    def _decode(self, response: httpx.Response, *, attempts: int) -> Any:
        status = response.status_code
        if status in (401, 403):
            raise AuthError(
                f"{self.api} rejected the API key (HTTP {status}: "
                f"{self._clean(_api_message(response))}). Check {self._key_hint}."
            )
        if status >= 400:
            tail = f" after {attempts} attempts" if status in RETRY_STATUSES else ""
            raise self.failure(
                f"{self.api} answered HTTP {status}{tail}: {self._clean(_api_message(response))}"
            )
        try:
            return response.json()
        except ValueError as e:
            raise self.failure(
                f"{self.api} sent a body that is not JSON (HTTP {status}): "
                f"{self._clean(response.text[:120])!r}"
            ) from e

    def close(self) -> None:
        self._client.close()
