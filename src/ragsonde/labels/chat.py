"""An OpenAI-compatible chat-completions client with token, cost and budget accounting.

``openai:MODEL`` against ``openai_base_url`` (OpenAI, Ollama's ``/v1``, vLLM, …), the key from
``OPENAI_API_KEY``. HTTP, retries (429 with Retry-After, 5xx, timeouts) and error translation are
:class:`ragsonde.embedders._http.JsonPoster`'s; this module adds the chat body, reading the
answer, and the :class:`~.models.Usage` of the run. A :class:`Budget` is checked before each call,
so a run stops cleanly between calls, never in the middle of one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ragsonde.config import Settings
from ragsonde.embedders._http import JsonPoster
from ragsonde.errors import EmbeddingError, QueryValidationError
from ragsonde.labels.models import Usage

__all__ = ["PRICES_PER_1K", "Budget", "ChatClient", "Price", "parse_llm"]

_API = "OpenAI-compatible chat API"


@dataclass(frozen=True)
class Price:
    """US dollars per 1,000 tokens, prompt and completion."""

    prompt: float
    completion: float


#: List prices (USD per 1k tokens) of common hosted models; anything else (a local Ollama or vLLM
#: model) costs 0 unless ``--price-per-1k`` says otherwise.
PRICES_PER_1K: dict[str, Price] = {
    "gpt-4o-mini": Price(0.00015, 0.0006),
    "gpt-4o": Price(0.0025, 0.01),
    "gpt-4.1": Price(0.002, 0.008),
    "gpt-4.1-mini": Price(0.0004, 0.0016),
    "gpt-4.1-nano": Price(0.0001, 0.0004),
}


class Budget(BaseModel):
    """Most calls and most dollars one run may spend (None: no limit)."""

    model_config = ConfigDict(frozen=True)

    max_calls: int | None = Field(default=None, ge=0)
    max_cost: float | None = Field(default=None, ge=0)


def parse_llm(spec: str) -> str:
    """``openai:MODEL`` -> ``MODEL``; anything else is a VALIDATION_ERROR."""
    provider, _, model = spec.partition(":")
    if provider != "openai" or not model:
        raise QueryValidationError(
            f"--llm must look like 'openai:MODEL' (any OpenAI-compatible endpoint, set with "
            f"OPENAI_BASE_URL), not '{spec}'.",
            field="llm",
        )
    return model


class _Message(BaseModel):
    content: str | None = None


class _Choice(BaseModel):
    message: _Message


class _TokenUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _Completion(BaseModel):
    """The parts of a chat-completions answer we read."""

    choices: list[_Choice] = Field(min_length=1)
    usage: _TokenUsage | None = None


class ChatClient:
    """One model behind one OpenAI-compatible endpoint; counts what it spends in :attr:`usage`."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        api_key: str | None,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        price: Price | None = None,
        budget: Budget | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.model = model
        self.name = f"openai:{model}"
        self.price = price or PRICES_PER_1K.get(model, Price(0.0, 0.0))
        self.budget = budget or Budget()
        self.usage = Usage()
        extra: dict[str, Any] = {} if sleep is None else {"sleep": sleep}
        self._poster = JsonPoster(
            _API,
            base_url,
            headers={"authorization": f"Bearer {api_key}"} if api_key else {},
            secret=api_key,
            timeout_s=timeout_s,
            max_retries=max_retries,
            key_hint="OPENAI_API_KEY",
            **extra,
        )

    @classmethod
    def from_settings(
        cls,
        spec: str,
        settings: Settings,
        *,
        budget: Budget | None = None,
        price: Price | None = None,
        timeout_s: float | None = None,
    ) -> ChatClient:
        key = settings.openai_api_key
        return cls(
            parse_llm(spec),
            base_url=settings.openai_base_url,
            api_key=key.get_secret_value() if key is not None else None,
            timeout_s=timeout_s or max(settings.embed_timeout_s, 60.0),
            max_retries=settings.embed_max_retries,
            price=price,
            budget=budget,
        )

    def can_call(self) -> bool:
        """Whether the budget allows one more call."""
        b, u = self.budget, self.usage
        if b.max_calls is not None and u.calls >= b.max_calls:
            return False
        return b.max_cost is None or u.cost_usd < b.max_cost

    def complete(self, messages: Sequence[dict[str, str]], *, max_tokens: int = 256) -> str:
        """The assistant's answer to ``messages`` (temperature 0). Raises EmbeddingError when
        the API fails after retries or its answer has no text; AuthError for a refused key."""
        body = {
            "model": self.model,
            "messages": list(messages),
            "temperature": 0,
            "max_tokens": max_tokens,
        }
        self.usage.calls += 1
        try:
            data = self._poster.post("/chat/completions", body)
            answer = _Completion.model_validate(data)
        except EmbeddingError:
            self.usage.failed += 1
            raise
        except ValueError as e:  # pydantic's ValidationError is a ValueError
            self.usage.failed += 1
            raise EmbeddingError(
                f"{_API} at {self._poster.base_url} answered without a chat completion "
                f"(no choices[0].message): {str(e)[:160]}"
            ) from e
        if answer.usage is not None:
            p, c = answer.usage.prompt_tokens, answer.usage.completion_tokens
            self.usage.prompt_tokens += p
            self.usage.completion_tokens += c
            self.usage.cost_usd += (p * self.price.prompt + c * self.price.completion) / 1000
        text = answer.choices[0].message.content
        if not text or not text.strip():
            self.usage.failed += 1
            raise EmbeddingError(f"{_API} answered with an empty message (model {self.model}).")
        return text

    def close(self) -> None:
        self._poster.close()
