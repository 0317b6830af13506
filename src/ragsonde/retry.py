"""One retry policy for every outbound HTTP call (the embedding APIs, web ingest), on tenacity.

An attempt that may succeed if repeated (a timeout, a refused connection, HTTP 429/5xx) raises
:class:`TryAgain`; :func:`call_with_retries` waits and repeats it, with exponential backoff and
jitter (or the server's ``Retry-After``, capped), until it returns, the attempts run out, or the
overall **deadline** would pass. The deadline bounds the whole call, waits and attempts together:
each attempt is told how many seconds remain, to use as its own timeout. So a hung server holds a
caller for about ``deadline_s``, not ``attempts x timeout``. When no attempt succeeds,
:class:`RetriesExhausted` carries the last reason, the number of attempts and the time spent.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import (
    RetryCallState,
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
    wait_exponential_jitter,
)
from tenacity.stop import stop_base

__all__ = ["RetriesExhausted", "RetryPolicy", "TryAgain", "call_with_retries", "parse_retry_after"]

T = TypeVar("T")

#: The shortest timeout an attempt is given: below it, the deadline has in effect passed.
MIN_ATTEMPT_S = 0.05


class TryAgain(Exception):
    """Raised by an attempt that may succeed if repeated; ``reason`` says what went wrong.

    ``retry_after``: the server asked for this many seconds' wait (``Retry-After``).
    ``outcome``: what to hand back if no attempt succeeds (e.g. the last HTTP response).
    """

    def __init__(
        self, reason: str, *, retry_after: float | None = None, outcome: object = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.outcome = outcome


class RetriesExhausted(Exception):
    """No attempt succeeded: ``last`` is the last :class:`TryAgain`; ``deadline_hit`` says
    whether the overall deadline (rather than the number of attempts) stopped the retries."""

    def __init__(
        self, last: TryAgain, *, attempts: int, elapsed_s: float, deadline_hit: bool
    ) -> None:
        super().__init__(last.reason)
        self.last = last
        self.attempts = attempts
        self.elapsed_s = elapsed_s
        self.deadline_hit = deadline_hit


@dataclass(frozen=True)
class RetryPolicy:
    """``retries`` after the first attempt; ``deadline_s`` for the whole call (None: attempts
    and their timeouts alone bound it); backoff from ``base_s`` doubling up to ``max_wait_s``."""

    retries: int
    deadline_s: float | None = None
    base_s: float = 0.25
    max_wait_s: float = 8.0


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header in seconds form (HTTP dates are ignored)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None


def call_with_retries(
    attempt: Callable[[float | None], T],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """``attempt(remaining_s)`` until it returns; ``remaining_s`` is None without a deadline.

    Raises :class:`RetriesExhausted` when every attempt raised :class:`TryAgain`; any other
    exception from ``attempt`` propagates at once.
    """
    start = time.monotonic()
    deadline = policy.deadline_s
    backoff = wait_exponential_jitter(
        multiplier=policy.base_s, max=policy.max_wait_s, jitter=policy.base_s
    )

    def remaining() -> float | None:
        if deadline is None:
            return None
        return max(MIN_ATTEMPT_S, deadline - (time.monotonic() - start))

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome is not None else None
        hinted = exc.retry_after if isinstance(exc, TryAgain) else None
        seconds = min(policy.max_wait_s, hinted) if hinted is not None else backoff(state)
        left = remaining()
        return seconds if left is None else max(0.0, min(seconds, left - MIN_ATTEMPT_S))

    stop: stop_base = stop_after_attempt(policy.retries + 1)
    if deadline is not None:
        stop = stop | stop_before_delay(deadline - MIN_ATTEMPT_S)
    retrying = Retrying(
        stop=stop,
        wait=wait,
        retry=retry_if_exception_type(TryAgain),
        sleep=sleep,
        reraise=False,
    )
    try:
        return retrying(lambda: attempt(remaining()))
    except RetryError as e:
        last = e.last_attempt.exception()
        if not isinstance(last, TryAgain):  # only TryAgain is retried; anything else propagates
            raise
        attempts = e.last_attempt.attempt_number
        raise RetriesExhausted(
            last,
            attempts=attempts,
            elapsed_s=time.monotonic() - start,
            deadline_hit=attempts <= policy.retries,
        ) from last
