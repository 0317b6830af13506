"""An output that cannot be written is refused before any LLM call is paid for (issue 33:
``--out`` a directory failed after all the calls): judge and generate, as real processes
against the fake OpenAI API, which counts the completions it served."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.labels import BenchmarkEntry, write_entries
from ragsonde.store import open_store
from ragsonde.testing.fake_chat_api import FakeChatAPI
from tests.labels.support import fill_sections
from tests.support import run

pytestmark = pytest.mark.slow  # processes


def _site(tmp_path: Path) -> tuple[Path, Path]:
    """A home with the sectioned site collection, and a one-query benchmark beside it."""
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    fill_sections(store, "site")
    store.close()
    bench = tmp_path / "b.jsonl"
    write_entries(bench, [BenchmarkEntry(query_id="q1", query="ultrasonic echo", relevant={})])
    return home, bench


@pytest.mark.parametrize("where", ["dir", "missing", "input"])
def test_judge_and_generate_refuse_a_bad_out_before_any_call(tmp_path: Path, where: str):
    home, bench = _site(tmp_path)
    before = bench.read_bytes()
    out = {"dir": tmp_path, "missing": tmp_path / "no" / "o.jsonl", "input": bench}[where]
    with FakeChatAPI(api_key="sk-out-key-12345") as api:
        env = {
            "RAGSONDE_HOME": str(home),
            "OPENAI_BASE_URL": f"{api.url}/v1",
            "OPENAI_API_KEY": "sk-out-key-12345",
        }
        llm = ("--llm", "openai:gpt-4o-mini")
        done = [run("judge", str(bench), "-c", "site", *llm, "--out", str(out), env=env)]
        if where != "input":  # generate reads no benchmark: it may replace one
            done.append(run("generate", "-c", "site", *llm, "--n", "2", "-o", str(out), env=env))
        for r in done:
            assert r.returncode == 2, r.stderr
            assert r.stderr.startswith("VALIDATION_ERROR: --out") and "Traceback" not in r.stderr
        assert api.completions == 0
    assert bench.read_bytes() == before


def test_judge_agreement_refuses_a_bad_side_report_before_any_call(tmp_path: Path):
    """``--agreement`` also writes OUT.agreement.json: a directory there was found after every
    call was paid for (exit 2 at the end). Refused first, by the CLI and by the library."""
    from ragsonde.errors import QueryValidationError
    from ragsonde.labels.judge import JudgeOptions, judge

    home, bench = _site(tmp_path)
    (tmp_path / "j.agreement.json").mkdir()
    out = tmp_path / "j.jsonl"
    with FakeChatAPI() as api:
        env = {"RAGSONDE_HOME": str(home), "OPENAI_BASE_URL": f"{api.url}/v1"}
        llm = ("--llm", "openai:gpt-4o-mini")
        r = run("judge", str(bench), "-c", "site", *llm, "--out", str(out), "--agreement", env=env)
        assert r.returncode == 2, r.stderr
        assert r.stderr.startswith("VALIDATION_ERROR: --agreement") and "directory" in r.stderr
        with pytest.raises(QueryValidationError, match=r"agreement\.json: is a directory"):
            judge(
                bench,
                out,
                options=JudgeOptions(llm="openai:gpt-4o-mini", agreement=True),
                settings=Settings(home=home, collection="site"),
            )
        assert api.completions == 0
    assert not out.exists()
