"""Asking the LLM through the cache, within the budget, and stopping when calls keep failing.

Shared by the judge and the LLM generator: an answer already in the cache costs nothing; a new
one is asked only while the budget allows, and stored as soon as it arrives (when ``accept``
takes it: an unreadable answer is not kept, so a later run asks again; nor is one ``keep``
refuses, a readable answer the caller cannot use, such as a question whose excerpt is not in its
chunk).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

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
    answered: int = 0
    """Answers had so far, from the cache or the model."""
    last_failure: str | None = None
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
        keep: Callable[[str], bool] | None = None,
    ) -> tuple[str, datetime] | None:
        """The accepted answer for ``key`` (cached or asked), or None. ``keep``: whether an
        accepted answer is cached (default: all are); one it refuses is handed back but not
        stored, and a cached one it refuses is asked again, so a later run can do better."""
        got = self.cache.get(kind, key, self.client.name)
        if got is not None and accept(got[0]) and (keep is None or keep(got[0])):
            self.client.usage.cached += 1
            self.answered += 1
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
        self.answered += 1
        if keep is not None and not keep(answer):
            return answer, datetime.now(UTC)
        return answer, self.cache.put(kind, key, self.client.name, answer)

    def _failed(self, why: str) -> None:
        """One more failed call; the run stops after :data:`MAX_FAILURES_IN_A_ROW`. A run that
        had no answer at all fails (LLM_ERROR), so its output is never written: an unreachable
        endpoint replaced the user's benchmark with an empty file and exited 0."""
        self.failures_in_a_row += 1
        self.last_failure = why
        if self.failures_in_a_row >= MAX_FAILURES_IN_A_ROW:
            self.stopped = f"{MAX_FAILURES_IN_A_ROW} calls in a row failed, the last: {why}"
            self.require_an_answer()

    def require_an_answer(self) -> None:
        """Fail (LLM_ERROR) when calls were made and every one failed: a run with no answer
        at all has nothing to write, and its output must not replace the user's file."""
        if self.answered == 0 and self.last_failure is not None:
            n = self.failures_in_a_row
            which = (
                "the one call made failed:"
                if n == 1
                else f"the first {n} calls all failed, the last:"
            )
            raise LlmError(
                f"{self.client.name}: {which} {self.last_failure.rstrip('.')}. Nothing was "
                "written; check the endpoint and the model."
            )
