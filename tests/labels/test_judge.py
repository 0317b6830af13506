"""The LLM judge end to end: real embedded Qdrant, real BM25 pooling, the loopback chat API."""

from __future__ import annotations

import json

import pytest

from ragsonde.config import Settings
from ragsonde.errors import LlmError
from ragsonde.labels import (
    BenchmarkEntry,
    GenerateOptions,
    Label,
    generate,
    read_entries,
    write_entries,
)
from ragsonde.labels.agreement import agreement
from ragsonde.labels.chat import Budget, ChatClient
from ragsonde.labels.judge import JudgeOptions, judge
from ragsonde.store import open_store
from ragsonde.testing.fake_chat_api import FakeChatAPI
from tests.labels.support import fill_sections
from tests.support import run

MODEL = "openai:gpt-4o-mini"
EMB: list = []  # the session's real model, set by the autouse fixture below


@pytest.fixture(autouse=True)
def _model(embedder):
    EMB[:] = [embedder]


pytestmark = pytest.mark.slow  # the real model embeds the queries of the dense and hybrid pools


def chat(api: FakeChatAPI, **kw) -> ChatClient:
    kw.setdefault("sleep", lambda s: None)
    return ChatClient("gpt-4o-mini", base_url=f"{api.url}/v1", api_key=None, **kw)


def opts(**kw) -> JudgeOptions:
    return JudgeOptions(llm=MODEL, depth=8, **kw)


@pytest.fixture
def bench(bm25_docs, tmp_path):
    settings, store = bm25_docs
    path = tmp_path / "gen.jsonl"
    generate(
        path, settings=settings, store=store, options=GenerateOptions(n=5, seed=3, method="gist")
    )
    return path


def judge_with(api, bm25_docs, bench, tmp_path, out="judged.jsonl", client=None, **kw):
    settings, store = bm25_docs
    return judge(
        bench,
        tmp_path / out,
        options=opts(**kw),
        settings=settings,
        store=store,
        client=client or chat(api),
        embedder=EMB[0],
    )


def test_judge_grades_the_unjudged_pool_and_keeps_provenance(api_and_docs, bench, tmp_path):
    api, docs = api_and_docs
    report = judge_with(api, docs, bench, tmp_path)
    assert report.queries == 5 and report.modes == ["dense", "sparse", "hybrid"]
    assert 40 <= report.pooled <= 120 and not report.errors  # 8 hits x 3 modes x 5 queries
    # The source document's chunks are already labelled by the generator; the rest are judged.
    assert report.judged + report.already_labelled == report.pooled and report.judged > 0
    assert report.usage.calls == api.completions == report.judged and report.usage.cached == 0
    assert sum(report.grades.values()) == report.judged
    assert report.labels_used == ["human", "generator", "llm"]
    entries = read_entries(tmp_path / "judged.jsonl")
    for e in entries:
        llm = [lab for lab in e.labels if lab.source == "llm"]
        assert all(lab.judge == MODEL and lab.chunk_id for lab in llm)
        assert e.relevant[e.source_doc] == 3  # the generator's label stays
        # Relevant from a document's best LLM grade 2 up; the source doc's grade untouched.
        for doc, best in e.labelled(["llm"]).items():
            assert (doc in e.relevant) == (best >= 2 or doc == e.source_doc)
    assert any(lab.source == "llm" for e in entries for lab in e.labels)


def test_the_report_says_which_search_each_pool_ran(api_and_docs, bench, tmp_path):
    api, (settings, store) = api_and_docs
    mine = settings.model_copy(
        update={"search": settings.search.overlay({"fusion": "rrf", "rrf_k": 7, "hnsw_ef": 33})}
    )
    report = judge(
        bench,
        tmp_path / "judged.jsonl",
        options=opts(),
        settings=mine,
        store=store,
        client=chat(api),
        embedder=EMB[0],
    )
    assert sorted(report.search) == sorted(report.modes) == ["dense", "hybrid", "sparse"]
    for mode, ran in report.search.items():
        assert ran.mode == mode and ran.top_k == 8 and ran.hnsw_ef == 33  # depth, settings
    assert report.search["hybrid"].fusion == "rrf" and report.search["hybrid"].rrf_k == 7


def test_a_rerun_costs_zero_calls(api_and_docs, bench, tmp_path):
    api, docs = api_and_docs
    first = judge_with(api, docs, bench, tmp_path, "a.jsonl")
    calls = api.completions
    again = judge_with(api, docs, bench, tmp_path, "b.jsonl")
    assert api.completions == calls and again.usage.calls == 0
    assert again.usage.cached == first.judged and again.usage.cost_usd == 0
    a = [e.relevant for e in read_entries(tmp_path / "a.jsonl")]
    assert a == [e.relevant for e in read_entries(tmp_path / "b.jsonl")]
    # Judging the judged file again: everything is labelled already, nothing is asked.
    third = judge(
        tmp_path / "a.jsonl",
        tmp_path / "c.jsonl",
        options=opts(),
        settings=docs[0],
        store=docs[1],
        client=chat(api),
        embedder=EMB[0],
    )
    assert third.judged == 0 and third.usage.calls == 0 and third.usage.cached == 0


def test_budget_stops_cleanly_and_saves_what_was_done(api_and_docs, bench, tmp_path):
    api, docs = api_and_docs
    r = judge_with(api, docs, bench, tmp_path, client=chat(api, budget=Budget(max_calls=3)))
    assert r.judged == 3 and r.usage.calls == 3 and r.usage.stopped_by_budget
    assert r.stopped == "the budget is spent"
    saved = read_entries(tmp_path / "judged.jsonl")
    assert sum(lab.source == "llm" for e in saved for lab in e.labels) == 3
    rest = judge_with(api, docs, bench, tmp_path, "rest.jsonl")
    assert rest.usage.cached == 3 and rest.usage.calls == rest.judged - 3


def test_429_500_and_malformed_answers_during_a_run(api_and_docs, bench, tmp_path):
    api, docs = api_and_docs
    api.faults.rate_limited, api.faults.server_error, api.faults.malformed = 2, 1, 1
    r = judge_with(api, docs, bench, tmp_path)
    assert r.usage.failed == 1  # the malformed body; 429s and the 500 were retried
    assert r.stopped is None and r.judged == r.pooled - r.already_labelled - 1
    again = judge_with(api, docs, bench, tmp_path, "again.jsonl")
    # Only what was not answered is asked again: the failed one (and any hit new to the pool).
    assert again.usage.failed == 0 and again.usage.calls >= 1
    assert again.usage.calls + again.usage.cached == again.judged


def test_a_hang_is_bounded_and_failures_in_a_row_stop_the_run(api_and_docs, bench, tmp_path):
    api, docs = api_and_docs
    api.faults.hang = 1
    r = judge_with(api, docs, bench, tmp_path, client=chat(api, timeout_s=0.3, max_retries=0))
    # The hung call gave up after its timeout (bounded: see test_chat) and the run went on.
    assert r.usage.failed == 1 and r.stopped is None
    assert r.judged == r.pooled - r.already_labelled - 1
    for f in (docs[0].home / "labels").glob("llm-cache.sqlite*"):
        f.unlink()  # nothing cached: every grade needs a call
    api.faults.server_error = 1000
    # no answer at all: LLM_ERROR, and the output is not written (an unreachable endpoint
    # replaced the user's --out with the unjudged benchmark, and exited 0)
    kept = '{"query": "kept", "relevant": ["a"]}\n'  # a benchmark: refused or not, left whole
    (tmp_path / "down.jsonl").write_text(kept, encoding="utf-8")
    calls = api.completions
    with pytest.raises(LlmError, match="the first 5 calls all failed"):
        judge_with(api, docs, bench, tmp_path, "down.jsonl", client=chat(api, max_retries=0))
    assert api.completions - calls == 5
    assert (tmp_path / "down.jsonl").read_text(encoding="utf-8") == kept


def test_agreement_against_human_labels(api_and_docs, tmp_path):
    api, docs = api_and_docs
    human = tmp_path / "human.jsonl"
    write_entries(
        human,
        [
            BenchmarkEntry(query_id="q1", query="gyroscope heading drift", relevant={"imu": 1}),
            BenchmarkEntry(query_id="q2", query="lithium cell voltage", relevant={"battery": 1}),
        ],
    )
    r = judge(
        human,
        tmp_path / "j.jsonl",
        options=opts(agreement=True),
        settings=docs[0],
        store=docs[1],
        client=chat(api),
        embedder=EMB[0],
    )
    a = r.agreement
    assert a is not None and a.queries == 2 and r.judged == r.pooled >= 8
    # Pairs are (query, document): a document's grade is the best of its judged chunks.
    written = read_entries(tmp_path / "j.jsonl")
    assert a.pairs == sum(len(e.labelled(["llm"])) for e in written) <= r.judged
    assert a.both_relevant + a.human_only + a.llm_only + a.both_not == a.pairs
    assert a.both_relevant >= 2 and a.kappa is not None and a.kappa > 0
    # recorded beside the written file (the Judge page reads it), never beside the input
    from ragsonde.labels.agreement import agreement_path
    from ragsonde.labels.models import Agreement

    recorded = agreement_path(tmp_path / "j.jsonl")
    assert recorded.name == "j.agreement.json"
    assert Agreement.model_validate_json(recorded.read_bytes()) == a
    assert not agreement_path(human).exists()
    # --agreement only measures: each human grade is written as it was, though the LLM graded
    # the document higher (a human 1 became the LLM's 3)
    by_id = {e.query_id: e for e in written}
    for qid, doc in (("q1", "imu"), ("q2", "battery")):
        llm = max(lab.grade for lab in by_id[qid].labels if lab.source == "llm" and lab.id == doc)
        assert llm >= 2 and by_id[qid].relevant[doc] == 1
    # and the hits labelled before the run are counted as such, as without the flag
    plain = judge(
        human,
        tmp_path / "plain.jsonl",
        options=opts(),
        settings=docs[0],
        store=docs[1],
        client=chat(api),
        embedder=EMB[0],
    )
    assert r.already_labelled == plain.already_labelled > 0 and plain.usage.calls == 0
    assert [e.relevant for e in read_entries(tmp_path / "plain.jsonl")] == [
        e.relevant for e in written
    ]


def test_an_llm_grade_never_replaces_a_human_one():
    """Whose label decides: a person's (0 included), then the generator's, then the LLM's."""
    from ragsonde.labels.judge import _relevant

    def lab(item, grade, source):
        return Label(id=item, grade=grade, source=source, judge="x")

    e = BenchmarkEntry(
        query_id="q",
        query="q",
        labels=[
            lab("a", 1, "human"),
            lab("a", 3, "llm"),
            lab("b", 0, "human"),
            lab("b", 3, "llm"),
            lab("c", 3, "generator"),
            lab("c", 1, "human"),
            lab("d", 2, "llm"),
            lab("d", 3, "llm"),
            lab("e", 1, "llm"),
        ],
    )
    everyone = ("human", "generator", "llm")
    assert _relevant(e, everyone, 2) == {"a": 1, "c": 1, "d": 3}
    assert _relevant(e, ("generator", "llm"), 2) == {"a": 3, "b": 3, "c": 3, "d": 3}


def test_kappa_by_hand():
    def entry(qid, human, llm):
        labels = [Label(id=d, grade=g, source="human", judge="me") for d, g in human.items()]
        labels += [Label(id=d, grade=g, source="llm", judge=MODEL) for d, g in llm.items()]
        return BenchmarkEntry(query_id=qid, query="q", labels=labels)

    # human [1,1,0,0] vs llm [1,0,0,0]: po = 3/4, pe = 2/4*1/4 + 2/4*3/4 = 1/2, kappa = 0.5
    a = agreement(
        [entry("1", {"a": 1, "b": 2}, {"a": 3, "b": 1, "c": 0, "d": 1}), entry("2", {}, {"x": 3})]
    )
    assert a.queries == 1 and a.pairs == 4
    assert a.kappa == pytest.approx(0.5) and a.raw_agreement == 0.75
    assert agreement([entry("1", {"a": 1}, {"a": 3})]).kappa is None  # one class: undefined


def test_cli_judge_then_rerun_costs_nothing(tmp_path, embedder):
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    fill_sections(store, "site", embedder=embedder)
    store.close()
    bench = tmp_path / "b.jsonl"
    write_entries(bench, [BenchmarkEntry(query_id="q1", query="ultrasonic echo", relevant={})])
    with FakeChatAPI(api_key="sk-cli-key-12345") as api:
        env = {
            "RAGSONDE_HOME": str(home),
            "OPENAI_BASE_URL": f"{api.url}/v1",
            "OPENAI_API_KEY": "sk-cli-key-12345",
        }
        args = (
            "judge",
            str(bench),
            "-c",
            "site",
            "--llm",
            MODEL,
            "--mode",
            "sparse",
            "--depth",
            "3",
            "--json",
        )
        first = run(*args, env=env)
        assert first.returncode == 0, first.stderr
        r1 = json.loads(first.stdout)
        assert r1["judged"] == 3 and r1["usage"]["calls"] == 3 and api.completions == 3
        assert (tmp_path / "b.judged.jsonl").is_file()
        second = json.loads(run(*args, env=env).stdout)
        assert second["usage"]["calls"] == 0 and second["usage"]["cached"] == 3
        assert api.completions == 3
        people = run(*args[:-1], "--max-calls", "0", env=env)
        assert people.returncode == 0 and "3 answers from the cache" in people.stdout
        bad = run(*args[:-1], "--max-calls", "-1", env=env)
        assert bad.returncode == 2 and "VALIDATION_ERROR" in bad.stderr
        env["OPENAI_API_KEY"] = "sk-wrong-key-999"
        (home / "labels" / "llm-cache.sqlite").unlink()
        denied = run(*args[:-1], env=env)
        assert denied.returncode == 1 and "AUTH_ERROR" in denied.stderr
        assert "sk-wrong-key-999" not in denied.stderr


def test_cli_judge_names_failed_queries_and_a_failing_stop_exits_1(tmp_path, embedder):
    """A query that could not be searched was only in --json; a run stopped by calls failing
    in a row exited 0, as a finished one does. A run its budget stopped still exits 0."""
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    fill_sections(store, "site", embedder=embedder)
    store.close()
    bench = tmp_path / "b.jsonl"
    too_long = "ultrasonic echo " * 200  # 3,200 characters: a query the search refuses
    write_entries(
        bench,
        [
            BenchmarkEntry(query_id="q1", query="ultrasonic echo lithium laser", relevant={}),
            BenchmarkEntry(query_id="long[bold]", query=too_long, relevant={}),
        ],
    )
    answered = []

    def tires(prompt: str) -> str:  # two grades, then nothing readable
        answered.append(prompt)
        return "##final score: 2" if len(answered) <= 2 else "I cannot decide."

    out = tmp_path / "j.jsonl"
    with FakeChatAPI(responder=tires) as api:
        env = {"RAGSONDE_HOME": str(home), "OPENAI_BASE_URL": f"{api.url}/v1"}
        args = ("judge", str(bench), "-c", "site", "--llm", MODEL, "--mode", "sparse")
        r = run(*args, "--depth", "8", "--out", str(out), env=env)
        assert api.completions == 7  # 2 answered, then 5 in a row unreadable: stop
        assert r.returncode == 1, r.stderr
        assert "1 queries could not be searched" in r.stderr and "long[bold]:" in r.stderr
        assert "VALIDATION_ERROR" in r.stderr  # why, as the search said it
        assert "5 calls in a row failed" in r.stderr and "exit 1" in r.stderr
        saved = read_entries(out)  # what was judged is saved
        assert sum(lab.source == "llm" for e in saved for lab in e.labels) == 2
        budget = run(*args, "--depth", "8", "--out", str(out), "--max-calls", "0", env=env)
        assert budget.returncode == 0, budget.stderr
        assert "budget" in budget.stdout and api.completions == 7


def test_cli_generate_whose_judging_keeps_failing_exits_1(tmp_path, embedder):
    """`generate --llm` judges its questions; when that judging stopped because calls kept
    failing, it exited 0 (a finished run's code) where `judge` exits 1. The questions and
    what was judged are still written."""
    from ragsonde.testing.fake_chat_api import default_responder

    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    fill_sections(store, "site", embedder=embedder)
    store.close()
    graded: list[str] = []

    def judge_tires(prompt: str) -> str:  # questions always; two grades, then unreadable
        if "final score" not in prompt:
            return default_responder(prompt)
        graded.append(prompt)
        return "##final score: 2" if len(graded) <= 2 else "I cannot decide."

    out = tmp_path / "g.jsonl"
    with FakeChatAPI(responder=judge_tires) as api:
        env = {"RAGSONDE_HOME": str(home), "OPENAI_BASE_URL": f"{api.url}/v1"}
        args = ("generate", "-c", "site", "--n", "4", "--out", str(out), "--llm", MODEL)
        r = run(*args, "--depth", "8", env=env)
        assert len(graded) == 7  # 2 graded, then 5 unreadable in a row: stop
        assert r.returncode == 1, r.stdout + r.stderr
        assert "LLM_ERROR" in r.stderr and "5 calls in a row failed" in r.stderr
        assert "exit 1" in r.stderr and "wrote 4 queries to" in r.stdout
        # one usage line for every call of the run (the same line was printed twice)
        assert r.stdout.count("LLM calls") == 1, r.stdout
        assert "questions and judging: 11 LLM calls" in r.stdout, r.stdout
        saved = read_entries(out)
        assert len(saved) == 4 and sum(lab.source == "llm" for e in saved for lab in e.labels) == 2
        as_json = run(*args, "--depth", "8", "--json", env=env)  # the same exit with --json
        assert as_json.returncode == 1 and json.loads(as_json.stdout)["judged"]["stopped"]
        budget = run(*args, "--depth", "8", "--max-calls", "0", env=env)
        assert budget.returncode == 0, budget.stderr  # a budget stop did what it was told
