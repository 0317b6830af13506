"""The one retry policy (``ragsonde.retry``): attempts, Retry-After, and the overall deadline."""

from __future__ import annotations

import time

import pytest

from ragsonde.retry import RetriesExhausted, RetryPolicy, TryAgain, call_with_retries


class Flaky:
    """Fails ``fails`` times with TryAgain, then returns; records what it was told."""

    def __init__(self, fails: int, retry_after: float | None = None) -> None:
        self.fails, self.retry_after, self.told = fails, retry_after, []

    def __call__(self, remaining):
        self.told.append(remaining)
        if len(self.told) <= self.fails:
            raise TryAgain(f"failure {len(self.told)}", retry_after=self.retry_after)
        return "ok"


def test_retries_until_success():
    waits: list[float] = []
    flaky = Flaky(2)
    assert call_with_retries(flaky, RetryPolicy(retries=3), sleep=waits.append) == "ok"
    assert len(flaky.told) == 3 and flaky.told == [None, None, None]
    assert len(waits) == 2 and all(0 < w <= 8.0 for w in waits)


def test_gives_up_after_the_attempts_with_the_last_reason():
    with pytest.raises(RetriesExhausted) as info:
        call_with_retries(Flaky(10), RetryPolicy(retries=2), sleep=lambda s: None)
    assert (info.value.attempts, info.value.last.reason) == (3, "failure 3")
    assert not info.value.deadline_hit


def test_retry_after_wins_over_backoff_and_is_capped():
    waits: list[float] = []
    call_with_retries(Flaky(1, retry_after=3.0), RetryPolicy(retries=1), sleep=waits.append)
    assert waits == [3.0]
    waits.clear()
    call_with_retries(
        Flaky(1, retry_after=3600), RetryPolicy(retries=1, max_wait_s=2.0), sleep=waits.append
    )
    assert waits == [2.0]


def test_the_deadline_bounds_attempts_and_waits_together():
    def slow(remaining):
        time.sleep(min(0.3, remaining))
        raise TryAgain("slow")

    started = time.monotonic()
    with pytest.raises(RetriesExhausted) as info:
        call_with_retries(slow, RetryPolicy(retries=50, deadline_s=1.0, base_s=0.05))
    assert time.monotonic() - started < 1.4
    assert info.value.deadline_hit and 2 <= info.value.attempts < 50


def test_each_attempt_is_told_the_time_left():
    flaky = Flaky(2)
    call_with_retries(flaky, RetryPolicy(retries=5, deadline_s=10.0), sleep=lambda s: None)
    assert all(t is not None and 9.0 < t <= 10.0 for t in flaky.told)
    assert flaky.told == sorted(flaky.told, reverse=True)


def test_other_exceptions_are_not_retried():
    calls = []

    def broken(remaining):
        calls.append(remaining)
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        call_with_retries(broken, RetryPolicy(retries=5), sleep=lambda s: None)
    assert len(calls) == 1
