"""``generate --llm``: questions from the loopback chat API, cached, checked, pooled and judged."""

from __future__ import annotations

import json

import pytest

from ragsonde.errors import LlmError
from ragsonde.labels import GenerateOptions, generate, read_entries
from ragsonde.labels.chat import Budget, ChatClient
from ragsonde.labels.sampling import read_chunks
from ragsonde.testing.fake_chat_api import FakeChatAPI
from tests.support import run

MODEL = "openai:gpt-4o-mini"

#: What a user's --out held before a run that must leave it whole (a benchmark of theirs).
USERS_BENCHMARK = '{"query": "the user\'s own", "relevant": ["a"]}\n'


def chat(api: FakeChatAPI, **kw) -> ChatClient:
    kw.setdefault("sleep", lambda s: None)
    return ChatClient("gpt-4o-mini", base_url=f"{api.url}/v1", api_key=None, **kw)


def test_questions_with_provenance_and_a_rerun_costs_nothing(sectioned, tmp_path):
    settings, store = sectioned
    with FakeChatAPI() as api:
        r = generate(
            tmp_path / "q.jsonl",
            settings=settings,
            store=store,
            client=chat(api),
            options=GenerateOptions(n=6, seed=1, llm=MODEL, judge=False),
        )
        assert r.written == 6 and r.usage is not None and r.usage.calls == 6 == api.completions
        assert r.generator == "llm:openai:gpt-4o-mini" and r.judged is None
        texts = {c.id: c.text for c in read_chunks(store, "docs")}
        for e in read_entries(tmp_path / "q.jsonl"):
            assert e.query.startswith("What is known about") and e.query.endswith("?")
            assert e.relevant == {e.source_doc: 3} and e.source_chunk in texts
            (lab,) = e.labels
            assert lab.source == "generator" and lab.judge == MODEL
            assert lab.chunk_id == e.source_chunk
            # The prompt sent was the source chunk's text.
        assert any(texts[e.source_chunk] in json.dumps(req.body) for req in api.requests)
        again = generate(
            tmp_path / "q2.jsonl",
            settings=settings,
            store=store,
            client=chat(api),
            options=GenerateOptions(n=6, seed=1, llm=MODEL, judge=False),
        )
        assert again.usage is not None and again.usage.calls == 0 and again.usage.cached == 6
        assert api.completions == 6
        assert (tmp_path / "q.jsonl").read_text().count("What is known") == 6
        assert [e.query for e in read_entries(tmp_path / "q2.jsonl")] == [
            e.query for e in read_entries(tmp_path / "q.jsonl")
        ]


def test_copied_questions_are_refused_and_a_failing_model_stops_the_run(sectioned, tmp_path):
    settings, store = sectioned
    copy = FakeChatAPI(responder=lambda prompt: prompt.split("Passage: ")[1].split("\n")[0])
    with copy as api, pytest.raises(LlmError, match="could not be used"):
        generate(
            tmp_path / "c.jsonl",
            settings=settings,
            store=store,
            client=chat(api),
            options=GenerateOptions(n=10, seed=1, llm=MODEL, judge=False),
        )
    assert api.completions == 5  # five refused in a row: stop asking
    assert not (tmp_path / "c.jsonl").exists()  # no question at all: nothing written


def test_budget_and_faults_while_generating(sectioned, tmp_path):
    settings, store = sectioned
    with FakeChatAPI() as api:
        api.faults.rate_limited, api.faults.server_error, api.faults.malformed = 1, 1, 1
        r = generate(
            tmp_path / "f.jsonl",
            settings=settings,
            store=store,
            client=chat(api, budget=Budget(max_calls=4)),
            options=GenerateOptions(n=6, seed=2, llm=MODEL, judge=False),
        )
        assert r.usage is not None and r.usage.calls == 4 and r.usage.stopped_by_budget
        assert r.usage.failed == 1 and r.written == 3  # 4 calls, the malformed one lost
        rest = generate(
            tmp_path / "g.jsonl",
            settings=settings,
            store=store,
            client=chat(api),
            options=GenerateOptions(n=6, seed=2, llm=MODEL, judge=False),
        )
        assert rest.written == 6 and rest.usage is not None
        assert rest.usage.cached == 3 and rest.usage.calls == 3


@pytest.mark.slow  # the real model embeds the questions for the dense and hybrid pools
def test_generated_questions_are_pooled_and_judged(bm25_docs, embedder, tmp_path):
    settings, store = bm25_docs
    with FakeChatAPI() as api:
        r = generate(
            tmp_path / "j.jsonl",
            settings=settings,
            store=store,
            client=chat(api),
            embedder=embedder,
            options=GenerateOptions(n=5, seed=0, llm=MODEL, depth=8),
        )
        assert r.judged is not None and r.judged.modes == ["dense", "sparse", "hybrid"]
        assert r.judged.judged > 0 and r.usage is not None
        assert r.usage.calls == 5 + r.judged.judged == api.completions
        entries = read_entries(tmp_path / "j.jsonl")
        assert all(e.relevant[e.source_doc] == 3 for e in entries)
        assert sum(lab.source == "llm" for e in entries for lab in e.labels) == r.judged.judged


@pytest.mark.slow  # a process
def test_cli_generate_llm(tmp_path):
    from ragsonde.config import Settings
    from ragsonde.store import open_store
    from tests.labels.support import fill_sections

    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    fill_sections(store, "site")
    store.close()
    with FakeChatAPI(api_key="sk-gen-key-4242") as api:
        env = {
            "RAGSONDE_HOME": str(home),
            "OPENAI_BASE_URL": f"{api.url}/v1",
            "OPENAI_API_KEY": "sk-gen-key-4242",
        }
        out = tmp_path / "g.jsonl"
        args = (
            "generate",
            "-c",
            "site",
            "--n",
            "4",
            "--out",
            str(out),
            "--llm",
            MODEL,
            "--no-judge",
            "--price-per-1k",
            "1,2",
        )
        res = run(*args, "--json", env=env)
        assert res.returncode == 0, res.stderr
        report = json.loads(res.stdout)
        assert report["written"] == 4 and report["usage"]["calls"] == 4
        assert report["usage"]["cost_usd"] > 0
        people = run(*args, env=env)
        assert people.returncode == 0 and "0 LLM calls (4 answers from the cache" in people.stdout
        bad = run("generate", "-c", "site", "--out", str(out), "--llm", "gpt-4o", env=env)
        assert bad.returncode == 2 and "openai:MODEL" in bad.stderr


def test_a_short_run_whose_every_call_failed_writes_nothing(sectioned, tmp_path):
    """Three questions asked of an endpoint that never answers: fewer calls than stop a run,
    so it wrote an empty benchmark over the user's --out and exited 0."""
    settings, store = sectioned
    out = tmp_path / "kept.jsonl"
    out.write_text(USERS_BENCHMARK, encoding="utf-8")
    with FakeChatAPI() as api:
        api.faults.server_error = 1000
        for n, said in ((3, "the first 3 calls all failed, the last"), (1, "the one call made")):
            with pytest.raises(LlmError, match=said):
                generate(
                    out,
                    settings=settings,
                    store=store,
                    client=chat(api, max_retries=0),
                    options=GenerateOptions(n=n, seed=1, llm=MODEL, judge=False),
                )
        assert api.completions == 4
    assert out.read_text(encoding="utf-8") == USERS_BENCHMARK


def test_answers_that_give_no_question_write_nothing_and_are_not_cached(spanned, tmp_path):
    """Every call answered, none with a usable question ("I cannot decide.": no excerpt in
    the chunk): it wrote an empty file over --out, said "wrote 0 queries" and exited 0, and
    cached the answers, so the same seed could never give a question."""
    settings, store = spanned
    out = tmp_path / "kept.jsonl"
    out.write_text(USERS_BENCHMARK, encoding="utf-8")
    opts = GenerateOptions(n=3, seed=1, llm=MODEL, judge=False)
    with FakeChatAPI(responder=lambda prompt: "I cannot decide.") as api:
        with pytest.raises(LlmError, match="3 answers came back") as info:
            generate(out, settings=settings, store=store, client=chat(api), options=opts)
        assert api.completions == 3
    assert "'I cannot decide.'" in str(info.value) and "not cached" in str(info.value)
    assert out.read_text(encoding="utf-8") == USERS_BENCHMARK
    with FakeChatAPI() as api:  # a model that answers: nothing unusable came from the cache
        with pytest.raises(LlmError, match="no answer came back; the run stopped: the budget"):
            generate(
                out,
                settings=settings,
                store=store,
                client=chat(api, budget=Budget(max_calls=0)),
                options=opts,
            )
        assert out.read_text(encoding="utf-8") == USERS_BENCHMARK
        r = generate(out, settings=settings, store=store, client=chat(api), options=opts)
        assert r.written == 3 == r.span_labelled and r.usage is not None
        assert r.usage.cached == 0 and r.usage.calls == 3 == api.completions


def test_a_refusal_is_no_question_even_without_spans(sectioned, tmp_path):
    """Chunks without a span check no excerpt, so "I cannot decide." (three words) was written
    as a query. Refusals, and statements where a question was asked for, are dropped and
    counted like the other unusable answers; real questions are kept."""
    from ragsonde.testing.fake_chat_api import default_responder

    refusals = iter(
        [
            "I cannot decide.",
            "Question: Sorry, the passage does not say enough to ask anything.",
            "The lidar manual covers beams and mirrors.",  # a statement, not a question
        ]
    )
    settings, store = sectioned
    out = tmp_path / "q.jsonl"
    opts = GenerateOptions(n=5, seed=1, llm=MODEL, judge=False)
    with FakeChatAPI(responder=lambda p: next(refusals, None) or default_responder(p)) as api:
        r = generate(out, settings=settings, store=store, client=chat(api), options=opts)
        assert api.completions == 5
    entries = read_entries(out)
    assert r.written == len(entries) == 2 and r.span_labelled == 0
    assert all(e.query.startswith("What is known about") for e in entries)
    assert r.not_questions == 3
    assert r.shortfall is not None and "3 LLM answers were no question" in r.shortfall


@pytest.mark.slow  # the real model embeds the questions for the dense and hybrid pools
def test_leakage_is_measured_against_the_source_not_the_judged_pool(bm25_docs, embedder, tmp_path):
    """Every question is about the battery page, whatever its source: the judge finds the
    battery page relevant to all of them, from pools BM25 helped make. Counting it, BM25
    "found the source first" for 100% of the queries; by hand, only for the one whose source
    is the battery page."""
    from ragsonde.testing.fake_chat_api import default_responder

    def about_batteries(prompt: str) -> str:
        if "final score" in prompt:
            return default_responder(prompt)
        return "What is known about lithium cell voltage charge?"

    settings, store = bm25_docs
    with FakeChatAPI(responder=about_batteries) as api:
        r = generate(
            tmp_path / "b.jsonl",
            settings=settings,
            store=store,
            client=chat(api),
            embedder=embedder,
            options=GenerateOptions(n=5, seed=0, llm=MODEL, depth=8),
        )
    entries = read_entries(tmp_path / "b.jsonl")
    others = [e for e in entries if e.source_doc != "battery"]
    assert others and all("battery" in e.relevant for e in others)  # judged relevant
    assert r.leakage is not None and r.leakage.queries == len(entries)
    # BM25 ranks the battery page first for every query, so the source only for its own
    assert r.leakage.bm25_top1 == pytest.approx(1 - len(others) / len(entries), abs=1e-4)
    assert not any("an LLM." in w for w in r.warnings)  # this run used one


def test_commands_the_labelling_tools_name_exist():
    """`ragsonde collections` (a group: usage, exit 2) was named where `ragsonde collections
    list` lists the copy: every command named in a message or a doc is a command that runs."""
    import ast
    import re

    import click
    import typer

    from ragsonde.cli.app import app
    from tests.support import ROOT

    root = typer.main.get_command(app)
    files = [*(ROOT / "src/ragsonde/labels").glob("*.py")]
    files += [ROOT / "src/ragsonde/cli/generate.py", ROOT / "src/ragsonde/cli/judge.py"]
    texts = [
        node.value
        for f in files
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    texts.append((ROOT / "docs/no-labels.md").read_text(encoding="utf-8"))
    named = {
        " ".join(m.split())
        for t in texts
        for m in re.findall(r"`ragsonde\s+([a-z][a-z\s-]*?)\s*(?:`|\s-|\s[A-Z])", t)
    }
    assert "collections list" in named and "judge" in named
    for words in named:
        cmd: click.Command = root
        for w in words.split():
            if not isinstance(cmd, click.Group) or w not in cmd.commands:
                break
            cmd = cmd.commands[w]
        assert not isinstance(cmd, click.Group), f"`ragsonde {words}` is a group, not a command"
