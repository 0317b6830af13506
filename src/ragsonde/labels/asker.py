"""Asking the LLM through the cache, within the budget, and stopping when calls keep failing.

Shared by the judge and the LLM generator: an answer already in the cache costs nothing; a new
one is asked only while the budget allows, and stored as soon as it arrives (when ``accept``
takes it: an unreadable answer is not kept, so a later run asks again).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from ragsonde.errors import LlmError
from ragsonde.labels.cache import LlmCache
from ragsonde.labels.chat import ChatClient

__all__ = ["MAX_FAILURES_IN_A_ROW", "CachedAsker"]

#: Calls failing in a row (after the client's own retries) that stop a run.
MAX_FAILURES_IN_A_ROW = 5


@dataclass
class CachedAsker:
    client: ChatClient
    cache: LlmCache
    failures_in_a_row: int = 0
    stopped: str | None = None
    """Why no more questions will be asked (budget spent, calls failing); None while going."""

    def ask(
        self,
        kind: str,
        key: str,
        messages: Sequence[dict[str, str]],
        *,
        max_tokens: int,
        accept: Callable[[str], bool],
    ) -> tuple[str, datetime] | None:
        """The accepted answer for ``key`` (cached or asked), or None."""
        got = self.cache.get(kind, key, self.client.name)
        if got is not None and accept(got[0]):
            self.client.usage.cached += 1
            return got
        if self.stopped is not None:
            return None
        if not self.client.can_call():
            self.client.usage.stopped_by_budget = True
            self.stopped = "the budget is spent"
            return None
        try:
            answer = self.client.complete(messages, max_tokens=max_tokens)
        except LlmError as e:
            self._failed(str(e))
            return None
        if not accept(answer):
            self.client.usage.failed += 1
            self._failed(f"an answer that could not be used: {answer[:80]!r}")
            return None
        self.failures_in_a_row = 0
        return answer, self.cache.put(kind, key, self.client.name, answer)

    def _failed(self, why: str) -> None:
        self.failures_in_a_row += 1
        if self.failures_in_a_row >= MAX_FAILURES_IN_A_ROW:
            self.stopped = f"{MAX_FAILURES_IN_A_ROW} calls in a row failed, the last: {why}"
