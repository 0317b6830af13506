"""An OpenAI-compatible chat-completions client with token, cost and budget accounting.

``openai:MODEL`` against ``openai_base_url`` (OpenAI, Ollama's ``/v1``, vLLM, …), the key from
``OPENAI_API_KEY``; ``local:NAME_OR_PATH`` against llama.cpp's own server started on loopback for
a local GGUF model (:mod:`.local`), through the very same client. HTTP, retries (429 with
Retry-After, 5xx, timeouts) and error translation are
:class:`ragsonde.embedders._http.JsonPoster`'s, told to raise :class:`~ragsonde.errors.LlmError`
(LLM_ERROR): this client is the boundary where chat failures get their type. This module adds the
chat body, reading the answer, and the :class:`~.models.Usage` of the run. A :class:`Budget` is
checked before each call, so a run stops cleanly between calls, never in the middle of one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from ragsonde.config import Settings
from ragsonde.embedders._http import JsonPoster
from ragsonde.errors import LlmError, QueryValidationError, mask_secrets
from ragsonde.labels.models import Usage
from ragsonde.retry import RetriesExhausted

if TYPE_CHECKING:
    from ragsonde.labels.local import LocalServer, ModelFile, PromptStyle

__all__ = ["PRICES_PER_1K", "PROVIDERS", "Budget", "ChatClient", "Price", "parse_llm"]

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


#: ``--llm`` providers: an OpenAI-compatible endpoint, or a local GGUF model on loopback.
PROVIDERS = ("openai", "local")


def parse_llm(spec: str) -> str:
    """``openai:MODEL`` or ``local:NAME_OR_PATH`` -> the part after the colon; anything else is
    a VALIDATION_ERROR."""
    provider, _, model = spec.partition(":")
    if provider not in PROVIDERS or not model:
        raise QueryValidationError(
            f"--llm must look like 'openai:MODEL' (any OpenAI-compatible endpoint, set with "
            f"OPENAI_BASE_URL) or 'local:NAME_OR_PATH' (a GGUF model run by llama.cpp on "
            f"loopback), not '{spec}'.",
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
        deadline_s: float | None = None,
        max_retries: int = 4,
        price: Price | None = None,
        budget: Budget | None = None,
        sleep: Callable[[float], None] | None = None,
        name: str | None = None,
        style: PromptStyle = "instruct",
        server: LocalServer | None = None,
    ) -> None:
        self.model = model
        self.name = name or f"openai:{model}"
        #: How prompts are written for this model (:mod:`.prompts`): a base model gets examples.
        self.style: PromptStyle = style
        self.price = price or PRICES_PER_1K.get(model, Price(0.0, 0.0))
        self.budget = budget or Budget()
        self.usage = Usage()
        #: The local model's file (path, sha256, origin) when ``--llm local:``; else None.
        self.model_file: ModelFile | None = server.model if server is not None else None
        self._server = server
        self._secret = api_key
        self._timeout_s = timeout_s
        extra: dict[str, Any] = {} if sleep is None else {"sleep": sleep}
        self._poster = JsonPoster(
            _API,
            base_url,
            headers={"authorization": f"Bearer {api_key}"} if api_key else {},
            secret=api_key,
            timeout_s=timeout_s,
            max_retries=max_retries,
            key_hint="OPENAI_API_KEY",
            deadline_s=deadline_s if deadline_s is not None else max(30.0, timeout_s),
            deadline_setting="RAGSONDE_LLM_DEADLINE_S",
            timeout_setting=None,  # the hang is said by _unanswered, with the time waited
            failure=LlmError,
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
        model = parse_llm(spec)
        if spec.startswith("local:"):
            return cls.local(model, settings, budget=budget, timeout_s=timeout_s)
        key = settings.openai_api_key
        timeout_s = timeout_s or max(settings.embed_timeout_s, 60.0)
        return cls(
            model,
            base_url=settings.openai_base_url,
            api_key=key.get_secret_value() if key is not None else None,
            timeout_s=timeout_s,
            deadline_s=max(settings.llm_deadline_s, timeout_s),
            max_retries=settings.embed_max_retries,
            price=price,
            budget=budget,
        )

    @classmethod
    def local(
        cls,
        model: str,
        settings: Settings,
        *,
        budget: Budget | None = None,
        timeout_s: float | None = None,
    ) -> ChatClient:
        """``local:NAME_OR_PATH``: the model's sha256 checked, llama.cpp's server started on
        loopback, and this client pointed at it; :meth:`close` stops the server."""
        from ragsonde.labels.local import LocalServer, resolve_model

        server = LocalServer(resolve_model(model, settings.home / "models"))
        timeout_s = timeout_s or 300.0  # a CPU model writes ~30-80 tokens a second
        try:
            return cls(
                server.model.name,
                base_url=f"{server.url}/v1",
                api_key=None,
                timeout_s=timeout_s,
                deadline_s=max(settings.llm_deadline_s, timeout_s),
                max_retries=1,
                price=Price(0.0, 0.0),
                budget=budget,
                name=f"local:{server.model.name}",
                style=server.model.style,
                server=server,
            )
        except BaseException:
            server.close()
            raise

    @property
    def deadline_s(self) -> float:
        """Seconds one call may take across its retries (``RAGSONDE_LLM_DEADLINE_S``)."""
        return self._poster.deadline_s

    def can_call(self) -> bool:
        """Whether the budget allows one more call."""
        b, u = self.budget, self.usage
        if b.max_calls is not None and u.calls >= b.max_calls:
            return False
        return b.max_cost is None or u.cost_usd < b.max_cost

    def complete(self, messages: Sequence[dict[str, str]], *, max_tokens: int = 256) -> str:
        """The assistant's answer to ``messages`` (temperature 0). Raises LlmError when the API
        fails after retries or its answer has no text; AuthError for a refused key."""
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
        except LlmError as e:
            self.usage.failed += 1
            raise self._unanswered(e) from e.__cause__
        except ValueError as e:  # pydantic's ValidationError is a ValueError
            self.usage.failed += 1
            raise LlmError(
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
            raise LlmError(f"{_API} answered with an empty message (model {self.model}).")
        return text

    def _unanswered(self, e: LlmError) -> LlmError:
        """``e`` as this client says it when no attempt was answered in time: its timeout
        per attempt is no setting of its own, so the message gives the time it waited."""
        cause = e.__cause__
        if not isinstance(cause, RetriesExhausted) or cause.last.outcome is not None:
            return e  # an HTTP error status (its message is the API's), or no retry at all
        return LlmError(
            f"{_API} at {mask_secrets(self._poster.base_url, [self._secret])} did not answer "
            f"within {self._timeout_s:g} s (tried {cause.attempts} "
            f"time{'s' if cause.attempts != 1 else ''} in {cause.elapsed_s:.1f} s; model "
            f"{self.model}). Try again later, or check that the endpoint serves this model; a "
            "slow local server may need a smaller model."
        )

    def close(self) -> None:
        self._poster.close()
        if self._server is not None:
            self._server.close()
            self._server = None
