"""A damaged LLM answer cache is an error naming the file (VALIDATION_ERROR, exit 2), never a
traceback and never answers: a file that is not SQLite, and a row whose time is no time.

Oracle: the run before the damage answered from the loopback chat API and cached its answers
(the second run asked nothing); the damage is planted in the real file."""

from __future__ import annotations

import json
import sqlite3

import pytest

from ragsonde.config import Settings
from ragsonde.labels import BenchmarkEntry, write_entries
from ragsonde.store import open_store
from ragsonde.testing.fake_chat_api import FakeChatAPI
from tests.labels.support import fill_sections
from tests.support import run

pytestmark = pytest.mark.slow


def test_a_damaged_answer_cache_is_an_error_naming_it(tmp_path, embedder):
    home = tmp_path / "home"
    store = open_store(Settings(home=home))
    fill_sections(store, "site", embedder=embedder)
    store.close()
    bench = tmp_path / "b.jsonl"
    write_entries(bench, [BenchmarkEntry(query_id="q1", query="ultrasonic echo", relevant={})])
    cache = home / "labels" / "llm-cache.sqlite"
    with FakeChatAPI(api_key="sk-cache-key-12345") as api:
        env = {"RAGSONDE_HOME": str(home), "OPENAI_BASE_URL": f"{api.url}/v1",
               "OPENAI_API_KEY": "sk-cache-key-12345"}  # fmt: skip
        args = ("judge", str(bench), "-c", "site", "--llm", "openai:gpt-4o-mini", "--mode",
                "sparse", "--depth", "3", "--json")  # fmt: skip
        first = run(*args, env=env)
        assert first.returncode == 0, first.stderr
        assert json.loads(run(*args, env=env).stdout)["usage"]["cached"] == 3
        with sqlite3.connect(cache) as db:  # a row's time that is no time
            db.execute("UPDATE answers SET at = 'yesterday-ish'")
        row = run(*args[:-1], env=env)
        assert row.returncode == 2, row.stderr
        assert row.stderr.startswith("VALIDATION_ERROR") and str(cache) in row.stderr
        assert "Traceback" not in row.stderr
        for extra in cache.parent.glob("llm-cache.sqlite-*"):  # the WAL beside it
            extra.unlink()
        cache.write_bytes(b"not a database at all, " * 100)
        garbage = run(*args[:-1], env=env)
        assert garbage.returncode == 2, garbage.stderr
        assert garbage.stderr.startswith("VALIDATION_ERROR") and str(cache) in garbage.stderr
        assert api.completions == 3  # the damaged cache was never answered from, nor asked past
