"""The chat client against the loopback fake, on the real chat-completions wire format."""

from __future__ import annotations

import time

import pytest

from ragsonde.config import Settings
from ragsonde.errors import AuthError, ErrorCode, LlmError, QueryValidationError
from ragsonde.labels.chat import Budget, ChatClient, Price, parse_llm
from ragsonde.labels.prompts import (
    judge_messages,
    longest_copied_run,
    parse_grade,
    parse_question,
)
from ragsonde.testing.fake_chat_api import FakeChatAPI

KEY = "sk-test-0123456789abcdef"


def client(api: FakeChatAPI, **kw) -> ChatClient:
    kw.setdefault("sleep", lambda s: None)
    return ChatClient("gpt-4o-mini", base_url=f"{api.url}/v1", api_key=KEY, **kw)


def test_a_completion_counts_tokens_and_cost():
    with FakeChatAPI(api_key=KEY) as api:
        c = client(api)
        answer = c.complete(judge_messages("lidar range", "Lidar measures range with lasers."))
        assert answer == "##final score: 3"
        (req,) = api.requests
        assert req.path == "/v1/chat/completions"
        assert {k.lower(): v for k, v in req.headers.items()}["authorization"] == f"Bearer {KEY}"
        assert req.body["model"] == "gpt-4o-mini" and req.body["temperature"] == 0
        assert req.body["messages"][0]["role"] == "user"
        u = c.usage
        assert u.calls == 1 and u.completion_tokens == 3 and u.prompt_tokens > 50
        assert u.cost_usd == pytest.approx((u.prompt_tokens * 0.00015 + 3 * 0.0006) / 1000)
        priced = client(api, price=Price(1.0, 2.0))
        priced.complete([{"role": "user", "content": "one two three"}])
        assert priced.usage.cost_usd == pytest.approx(
            (3 * 1.0 + priced.usage.completion_tokens * 2.0) / 1000
        )


def test_429_waits_for_retry_after_then_succeeds():
    slept: list[float] = []
    with FakeChatAPI() as api:
        api.faults.rate_limited, api.faults.retry_after = 2, "1.5"
        c = client(api, sleep=slept.append)
        assert c.complete([{"role": "user", "content": "hi there"}])
        assert api.completions == 3 and slept == [1.5, 1.5]
        assert c.usage.calls == 1 and c.usage.failed == 0


def test_500_is_retried_and_fails_cleanly_when_it_persists():
    with FakeChatAPI() as api:
        api.faults.server_error = 1
        c = client(api)
        assert c.complete([{"role": "user", "content": "hi"}])
        api.faults.server_error = 10
        with pytest.raises(LlmError, match="HTTP 500 after 3 attempts"):
            client(api, max_retries=2).complete([{"role": "user", "content": "hi"}])


def test_malformed_json_is_an_llm_error_not_a_crash():
    with FakeChatAPI() as api:
        api.faults.malformed = 1
        c = client(api)
        with pytest.raises(LlmError, match="not JSON") as info:
            c.complete([{"role": "user", "content": "hi"}])
        assert info.value.code is ErrorCode.LLM_ERROR
        assert c.usage.failed == 1 and c.usage.calls == 1


def test_a_refused_connection_is_an_llm_error_with_its_code():
    with FakeChatAPI() as api:
        url = api.url
    c = ChatClient("m", base_url=f"{url}/v1", api_key=None, max_retries=0, sleep=lambda s: None)
    with pytest.raises(LlmError, match="Cannot reach") as info:
        c.complete([{"role": "user", "content": "hi"}])
    assert info.value.code.value == "LLM_ERROR"


def test_a_hang_ends_within_the_timeout():
    with FakeChatAPI() as api:
        api.faults.hang = 2
        c = client(api, timeout_s=0.3, max_retries=1)
        t0 = time.perf_counter()
        with pytest.raises(LlmError, match=r"did not answer within 0.3 s \(tried 2 times") as info:
            c.complete([{"role": "user", "content": "hi"}])
        assert time.perf_counter() - t0 < 3.0
        assert api.completions == 2
    # the chat client's timeout is no embedding setting: it advised RAGSONDE_EMBED_TIMEOUT_S
    assert "RAGSONDE_EMBED" not in str(info.value) and c.usage.failed == 1


def test_a_5xx_past_the_deadline_names_the_chat_setting_not_the_embedding_one():
    """The chat client shares the embedders' HTTP poster, whose advice named
    RAGSONDE_EMBED_DEADLINE_S, a setting that does not bound a chat call; each caller now names
    its own (RAGSONDE_LLM_DEADLINE_S, read by from_settings)."""
    with FakeChatAPI() as api:
        api.faults.server_error = 100
        c = ChatClient("m", base_url=f"{api.url}/v1", api_key=None, deadline_s=1.0, max_retries=10)
        t0 = time.perf_counter()
        with pytest.raises(LlmError, match="did not recover within the 1 s deadline") as info:
            c.complete([{"role": "user", "content": "hi"}])
        assert time.perf_counter() - t0 < 3.0 and api.completions >= 2
    message = str(info.value)
    assert "raise RAGSONDE_LLM_DEADLINE_S." in message and "RAGSONDE_EMBED" not in message
    slow = Settings(openai_base_url="http://127.0.0.1:9/v1", llm_deadline_s=240.0)
    assert ChatClient.from_settings("openai:m", slow).deadline_s == 240.0
    short = slow.model_copy(update={"llm_deadline_s": 5.0})  # never below one attempt's timeout
    assert ChatClient.from_settings("openai:m", short).deadline_s == 60.0


def test_a_wrong_key_is_an_auth_error_without_the_key():
    with FakeChatAPI(api_key="right-key-123") as api:
        with pytest.raises(AuthError) as info:
            client(api).complete([{"role": "user", "content": "hi"}])
        assert KEY not in str(info.value) and "OPENAI_API_KEY" in str(info.value)


def test_budget_counts_calls_and_dollars():
    with FakeChatAPI() as api:
        c = client(api, budget=Budget(max_calls=2))
        for _ in range(2):
            assert c.can_call()
            c.complete([{"role": "user", "content": "hi"}])
        assert not c.can_call()
        d = client(api, budget=Budget(max_cost=0.0001), price=Price(1.0, 1.0))
        assert d.can_call()
        d.complete([{"role": "user", "content": "a b c d e f g h"}])
        assert not d.can_call()


def test_llm_spec():
    assert parse_llm("openai:llama3.1:8b") == "llama3.1:8b"
    assert parse_llm("local:gemma3-270m") == "gemma3-270m"
    for bad in ("gpt-4o", "cohere:command", "openai:", "local:"):
        with pytest.raises(QueryValidationError):
            parse_llm(bad)


@pytest.mark.parametrize(
    ("answer", "grade"),
    [
        ("##final score: 2", 2),
        ("M: 2, T: 3\n##Final Score: 3", 3),
        ("**1**", 1),
        ("0", 0),
        ("I think it is relevant", None),
        ("##final score: 7", None),
    ],
)
def test_parse_grade(answer, grade):
    assert parse_grade(answer) == grade


def test_refusals_and_statements_are_no_question():
    """'I cannot decide.' has three words, the only test there was; a refusal's opening
    (REFUSALS), and a statement where a question was asked for, are no question now. A base
    model's few-shot prompt shows keyword queries, so there only refusals are refused."""
    refusals = (
        "I cannot decide.",
        "Question: I can't answer that from this passage.",
        "Sorry, I am not able to help with that.",
        "As an AI language model, I have no opinion.",
        "The passage does not contain enough to ask.",
        "There is no question in this text.",
        "Not enough information to write one.",
        "Unable to generate a question.",
    )
    for answer in refusals:
        assert parse_question(answer) is None, answer
        assert parse_question(answer, "fewshot") is None, answer
    assert parse_question("The lidar sends laser pulses.") is None  # asked for a question
    assert parse_question("Tell me about the lidar mirror.") is None
    assert parse_question("In what year did the lidar ship?") == "In what year did the lidar ship?"
    assert parse_question("Is the IMU heading biased") == "Is the IMU heading biased"
    assert parse_question("lidar mirror alignment steps", "fewshot") == (
        "lidar mirror alignment steps"  # an InPars-style query
    )


def test_parse_question_and_copy_check():
    assert parse_question('Question: "How far can lidar see?"\n') == "How far can lidar see?"
    assert parse_question("\n\n1. Why does heading drift?") == "Why does heading drift?"
    assert parse_question("Lidar?") is None
    passage = "Lidar measures distance by timing laser pulses reflected off surfaces."
    assert longest_copied_run("How does it time laser pulses reflected back?", passage) == 3
    assert longest_copied_run("What sensor ranges with light?", passage) == 0
