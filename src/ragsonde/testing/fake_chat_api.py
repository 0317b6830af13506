"""A real HTTP server on loopback that speaks OpenAI's chat-completions API.

For the one thing that cannot run here, a paid LLM. It answers ``POST /v1/chat/completions`` with
the real response and error bodies, and can be told to fail: a wrong key, N rate-limited answers
(429 with ``Retry-After``), N server errors (500), N malformed bodies, N hanging requests (held
until the client gives up or the fake stops). It records every request it receives.

The answers are deterministic. A judging prompt (one that asks for ``##final score``) is graded by
how many of the query's words the passage holds; a question-writing prompt gets a question built
from the passage's longest words (and, when the prompt asks for an excerpt, the passage's first
sentence as the excerpt). ``responder`` replaces both.

    with FakeChatAPI(api_key="k") as api:
        client = ChatClient("gpt-4o-mini", base_url=f"{api.url}/v1", api_key="k")
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Any

from ragsonde.testing._loopback import base_url, serve, shutdown, take_fault

__all__ = ["ChatFaults", "FakeChatAPI", "RecordedChat", "default_responder"]

_WORD = re.compile(r"[a-z][a-z0-9-]+")
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "is",
        "are",
        "was",
        "were",
        "be",
        "how",
        "what",
        "which",
        "does",
        "do",
        "it",
        "its",
        "that",
        "this",
        "from",
        "at",
        "as",
        "about",
        "can",
    ]
)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def default_responder(prompt: str) -> str:
    """The fake model: grade by query-word overlap, or write a question from long words."""
    if "final score" in prompt:
        query = re.search(r"Query: (.*)", prompt)
        passage = re.search(r"Passage: (.*)", prompt)
        q = _words(query.group(1)) if query else set()
        p = _words(passage.group(1)) if passage else set()
        share = len(q & p) / len(q) if q else 0.0
        grade = 3 if share >= 0.75 else 2 if share >= 0.5 else 1 if share > 0 else 0
        return f"##final score: {grade}"
    passage = re.search(r"Passage: (.*)", prompt)
    words = sorted(_words(passage.group(1) if passage else ""), key=lambda w: (-len(w), w))
    question = f"What is known about {' and '.join(words[:3]) or 'this'}?"
    if "Excerpt:" not in prompt or passage is None:
        return question
    # The excerpt a model copies: the passage's first sentence, as written.
    excerpt = re.split(r"(?<=[.!?])\s", passage.group(1).strip(), maxsplit=1)[0]
    return f"Question: {question}\nExcerpt: {excerpt}"


@dataclass
class RecordedChat:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ChatFaults:
    rate_limited: int = 0
    server_error: int = 0
    malformed: int = 0
    hang: int = 0
    retry_after: str = "0"


@dataclass
class FakeChatAPI:
    """Start with ``with``; the OpenAI base URL is ``{url}/v1``."""

    api_key: str | None = None
    faults: ChatFaults = field(default_factory=ChatFaults)
    responder: Callable[[str], str] = default_responder
    requests: list[RecordedChat] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("the fake API is not running")
        return base_url(self._server)

    @property
    def completions(self) -> int:
        """Requests that reached the completions route (every attempt counts)."""
        return sum(r.path.endswith("/chat/completions") for r in self.requests)

    def __enter__(self) -> FakeChatAPI:
        self._stop.clear()
        self._server = serve(self._answer)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()  # releases hanging requests
        if self._server is not None:
            shutdown(self._server)
            self._server = None

    # -- behaviour -----------------------------------------------------------------------------
    def _take(self, name: str) -> bool:
        return take_fault(self.faults, name, self._lock)

    @staticmethod
    def _error(status: int, message: str, type_: str, code: str | None) -> dict[str, Any]:
        return {"error": {"message": message, "type": type_, "param": None, "code": code}}

    def _answer(
        self, path: str, headers: dict[str, str], body: Any
    ) -> tuple[int, Any, dict[str, str]]:
        with self._lock:
            self.requests.append(RecordedChat(path, headers, body))
        if not path.endswith("/v1/chat/completions"):
            return (
                404,
                self._error(
                    404,
                    f"Unknown request URL: POST {path}.",
                    "invalid_request_error",
                    "unknown_url",
                ),
                {},
            )
        auth = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            return (
                401,
                self._error(
                    401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key"
                ),
                {},
            )
        if self._take("hang"):
            self._stop.wait(60)
            return 504, self._error(504, "gateway timeout", "server_error", None), {}
        if self._take("rate_limited"):
            msg = "Rate limit reached for requests per min. Please try again in 1s."
            return (
                429,
                self._error(429, msg, "requests", "rate_limit_exceeded"),
                {"retry-after": self.faults.retry_after},
            )
        if self._take("server_error"):
            msg = "The server had an error while processing your request. Sorry about that!"
            return 500, self._error(500, msg, "server_error", None), {}
        if self._take("malformed"):
            return 200, b'{"id": "chatcmpl-x", "choices": [{"message": {"content": "##fi', {}
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list) or not messages or not body.get("model"):
            return (
                400,
                self._error(
                    400,
                    "'messages' and 'model' are required properties.",
                    "invalid_request_error",
                    None,
                ),
                {},
            )
        prompt = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
        answer = self.responder(prompt)
        p_tokens, c_tokens = len(prompt.split()), len(answer.split())
        return (
            200,
            {
                "id": f"chatcmpl-fake{len(self.requests)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer, "refusal": None},
                        "logprobs": None,
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": p_tokens,
                    "completion_tokens": c_tokens,
                    "total_tokens": p_tokens + c_tokens,
                },
                "system_fingerprint": "fp_fake",
            },
            {},
        )
