"""The CLI as a user drives it: a real process, real exit codes, real stores."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.store import open_store
from tests.support import ROOT, fill, run

#: Every test here runs ``python -m ragsonde`` in a subprocess.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def home(tmp_path_factory, embedder) -> Path:
    path = tmp_path_factory.mktemp("clihome")
    store = open_store(Settings(home=path))
    fill(store, embedder, "rag_embedding")
    store.create_collection("tiny", 8)
    store.close()
    return path


def env_for(home: Path) -> dict[str, str]:
    return {"RAGSONDE_HOME": str(home)}


def test_query_json_is_the_contract_response(home):
    out = run("query", "laser distance measurement", "-k", "3", "--json", env=env_for(home))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "success" and data["total_results"] == len(data["results"]) == 3
    assert data["results"][0]["metadata"]["doc_id"] == "lidar"
    assert set(data["timings"]) == {"embedding_ms", "search_ms", "post_processing_ms", "total_ms"}


def test_query_table_for_people(home):
    out = run("query", "why does the heading drift", "-k", "2", env=env_for(home))
    assert out.returncode == 0, out.stderr
    assert "IMU" in out.stdout and "total" in out.stdout and "ms" in out.stdout
    # a filter is applied and said with the search (it was applied without a word)
    filtered = run("query", "heading drift", "--filter", "doc_id=lidar", env=env_for(home))
    assert filtered.returncode == 0, filtered.stderr
    assert 'filters {"doc_id": "lidar"}' in " ".join(filtered.stdout.split())


@pytest.mark.parametrize(
    "args",
    [
        ["query", ""],
        ["query", "x", "--top-k", "101"],
        ["query", "x", "--threshold", "1.5"],
        ["query", "x", "--filter", "nope"],
        ["query", "x", "--filter", "colour=red"],
    ],
)
def test_bad_input_exits_2_with_validation_error(home, args):
    out = run(*args, "--json", env=env_for(home))
    assert out.returncode == 2, out.stdout + out.stderr
    data = json.loads(out.stdout)
    assert data["status"] == "error" and data["error"]["code"] == "VALIDATION_ERROR"
    assert "Traceback" not in out.stderr


def test_missing_collection_exits_1(home):
    out = run("query", "x", "--collection", "nope", "--json", env=env_for(home))
    assert out.returncode == 1
    assert json.loads(out.stdout)["error"]["code"] == "COLLECTION_NOT_FOUND"
    human = run("query", "x", "--collection", "nope", env=env_for(home))
    assert human.returncode == 1 and "COLLECTION_NOT_FOUND" in human.stderr
    assert "Traceback" not in human.stderr


def test_dimension_mismatch(home):
    out = run("query", "x", "--collection", "tiny", "--json", env=env_for(home))
    assert out.returncode == 1
    err = json.loads(out.stdout)["error"]
    assert err["code"] == "DIMENSION_MISMATCH" and "384" in err["message"] and "8" in err["message"]


def test_unreachable_qdrant_is_a_connection_error_within_10s(tmp_path):
    started = time.monotonic()
    out = run(
        "query",
        "x",
        "--json",
        env={"QDRANT_URL": "http://127.0.0.1:9", "RAGSONDE_HOME": str(tmp_path)},
    )
    elapsed = time.monotonic() - started
    assert out.returncode == 1, out.stdout + out.stderr
    assert json.loads(out.stdout)["error"]["code"] == "CONNECTION_ERROR"
    assert elapsed < 10 + 5  # 10 s budget plus interpreter start-up on a loaded machine


def test_batch_file_partial(home, tmp_path):
    f = tmp_path / "q.jsonl"
    f.write_text('{"text": "laser range"}\n{"text": ""}\n{"query": "LiPo safety", "top_k": 1}\n')
    out = run("batch", str(f), "--json", env=env_for(home))
    assert out.returncode == 2, out.stderr  # the only failure is a validation error
    data = json.loads(out.stdout)
    assert data["status"] == "partial"
    assert [r["status"] for r in data["responses"]] == ["success", "error", "success"]
    assert data["responses"][2]["results"][0]["metadata"]["doc_id"] == "lipo"
    arr = tmp_path / "q.json"
    arr.write_text(json.dumps([{"text": "gps"}, {"text": "slam"}]))
    ok = run("batch", str(arr), "--json", env=env_for(home))
    assert ok.returncode == 0 and json.loads(ok.stdout)["status"] == "success"
    missing = run("batch", str(tmp_path / "none.jsonl"), "--json", env=env_for(home))
    assert missing.returncode == 2


def test_inspect(home):
    out = run("inspect", "--json", env=env_for(home))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["points_count"] == 8 and data["dimension"] == 384
    assert data["dimension_matches"] is True
    assert data["mapping"]["text"] == "text" and data["mapping"]["url"] == "url"
    fields = {f["field"]: f for f in data["fields"]}
    assert fields["url"]["fill_rate"] == 1.0 and fields["url"]["indexed"] == "keyword"
    tiny = json.loads(run("inspect", "-c", "tiny", "--json", env=env_for(home)).stdout)
    assert tiny["dimension_matches"] is False


def test_every_command_has_help_and_is_on_the_docs_site():
    """Every command has help, and a page of the docs site (beyond the generated reference)
    shows it in use: the README is a landing page, the site is where commands are taught."""
    out = run("--help")
    assert out.returncode == 0
    commands = re.findall(r"│ (\w+)\s{2,}", out.stdout)
    assert {"query", "batch", "inspect", "ingest", "eval", "serve"} <= set(commands)
    site = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md"))
    for cmd in commands:
        assert f"ragsonde {cmd}" in site, f"no page of docs/ shows `ragsonde {cmd}`"
        sub = run(cmd, "--help")
        assert sub.returncode == 0 and len(sub.stdout) > 100


def test_ingest_command_json_and_errors(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "lidar.md").write_text(
        "# Lidar\n\nLidar times laser pulses.\n\n## Care\n\nKeep the window clean.\n"
    )
    (docs / "bad.md").write_bytes(b"\xff\xfe\x00bad")
    home = tmp_path / "home"
    out = run("ingest", str(docs), "-c", "cli", "--home", str(home), "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report) == {
        "collection",
        "documents",
        "chunks",
        "embedded",
        "rewritten",
        "skipped",
        "deleted",
        "failed",
        "seconds",
        "warnings",
    }
    assert (report["documents"], report["chunks"], report["embedded"]) == (1, 2, 2)
    assert report["failed"][0]["source"] == "bad.md"
    again = run("ingest", str(docs), "-c", "cli", "--home", str(home))
    assert again.returncode == 0 and "0 embedded, 0 payload updated, 2 unchanged" in again.stdout
    assert "bad.md" in again.stderr
    # front matter that reaches the payload, not the embedded text: written, not "unchanged"
    lidar = docs / "lidar.md"
    lidar.write_text("---\nowner: perception\n---\n" + lidar.read_text())
    edited = run("ingest", str(docs), "-c", "cli", "--home", str(home), "--json")
    assert (json.loads(edited.stdout)["rewritten"], json.loads(edited.stdout)["skipped"]) == (2, 0)
    lidar.write_text(lidar.read_text().replace("owner: perception", "owner: platform"))
    edited = run("ingest", str(docs), "-c", "cli", "--home", str(home))
    assert "0 embedded, 2 payload updated, 0 unchanged" in edited.stdout
    missing = run("ingest", str(tmp_path / "nope"), "--home", str(home))
    assert missing.returncode == 2 and "does not exist" in missing.stderr
