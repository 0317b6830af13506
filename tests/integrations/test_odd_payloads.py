"""A collection a plain qdrant-client script wrote with payload values of unexpected types where
ragsonde reads a field: the text as an integer, a list of strings, null or an object; a url that
is a number; a title that is true; a document id that is a list, an integer or an object; nested
metadata. Read through local mode (``QDRANT_URL`` a folder), as a user's, by the real commands.

Before, a list became its Python spelling as the chunk's text (``"['a', 'b']"``), a document id
kept in a list never matched its benchmark id and ``explain`` blamed the ranking for a document
at rank 1, with not a word anywhere. The rule (:mod:`ragsonde.models.unread`): a number is read
as its text (a document id: an integer only); anything else reads as absent, stays in
``metadata`` as stored, and is counted in a warning naming the field, the type and a point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from ragsonde.config import Settings
from ragsonde.models import Response
from ragsonde.retriever import Retriever
from ragsonde.server import create_app
from tests.integrations.support import Built, client_collection
from tests.support import home_env, run, run_server

pytestmark = pytest.mark.slow  # processes that load the model


def _payloads(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Row i's payload: its text and id where ragsonde reads them, but for the odd ones."""
    out: list[dict[str, Any]] = [
        {"text": r["text"], "doc_id": r["_id"], "title": r["title"]} for r in rows
    ]
    out[1]["text"] = 12345
    out[2]["text"] = [s + "." for s in rows[2]["text"].split(". ")[:2]]
    out[3]["text"] = None
    out[4]["text"] = {"body": rows[4]["text"]}
    out[5].update(url=5, title=True, chunk_index=True, metadata={"nested": {"deep": [1, 2]}})
    out[6]["doc_id"] = [rows[6]["_id"], "another"]
    out[7]["doc_id"] = int(rows[7]["_id"])
    out[8]["doc_id"] = {"id": rows[8]["_id"]}
    out[9]["chunk_index"] = "first"
    return out


@pytest.fixture(scope="module")
def odd(tmp_path_factory, embedder, scifact_rows) -> Built:
    """Ten SciFact abstracts, each point's vector its abstract's own (so each title finds it)."""
    from qdrant_client import models

    folder = tmp_path_factory.mktemp("odd") / "qdrant"
    rows = scifact_rows[:10]
    vectors = embedder.embed_documents([r["text"] for r in rows])
    points = [
        models.PointStruct(id=i, vector=v.tolist(), payload=p)
        for i, (p, v) in enumerate(zip(_payloads(rows), vectors, strict=True))
    ]
    cosine = models.VectorParams(size=384, distance=models.Distance.COSINE)
    client_collection(folder, "odd", cosine, points)
    return Built("qdrant-client", folder, "odd", rows)


def _bench(b: Built, tmp_path: Path) -> Path:
    """Each title, its abstract relevant; and ``x2``: the first title, the list-text abstract
    relevant (a miss to explain)."""
    rows = [
        {"query_id": f"t{i}", "query": r["title"], "relevant": [r["_id"]]}
        for i, r in enumerate(b.rows)
    ]
    rows.append({"query_id": "x2", "query": b.rows[0]["title"], "relevant": [b.rows[2]["_id"]]})
    path = tmp_path / "odd.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _env(b: Built, tmp_path: Path) -> dict[str, str]:
    return {**home_env(tmp_path / "home"), "QDRANT_URL": str(b.path)}


def _clean(res: Any) -> None:
    assert "Traceback" not in res.stderr + res.stdout, res.stderr


def _no_python_spelling(texts: list[str | None]) -> None:
    """No text is a list's, an object's or a boolean's Python spelling."""
    for t in texts:
        assert t is None or not (t.startswith(("[", "{")) or t in {"True", "False"}), t


def _check_results(results: list[dict[str, Any]]) -> None:
    by_id = {r["chunk_id"]: r for r in results}
    assert len(by_id) == 10
    _no_python_spelling([r["text"] for r in results] + [r["url"] for r in results])
    _no_python_spelling([r["title"] for r in results])
    assert by_id["1"]["text"] == "12345"  # a number: its text, as stored
    assert by_id["2"]["text"] == "" and isinstance(by_id["2"]["metadata"]["text"], list)
    assert by_id["3"]["text"] == "" and "text" not in by_id["3"]["metadata"]  # null: absent
    assert by_id["4"]["text"] == "" and by_id["4"]["metadata"]["text"]["body"]
    five = by_id["5"]
    assert five["url"] == "5" and five["title"] is None and five["chunk_index"] is None
    assert five["metadata"]["title"] is True and five["metadata"]["chunk_index"] is True
    assert five["metadata"]["metadata"] == {"nested": {"deep": [1, 2]}}
    assert by_id["6"]["metadata"]["doc_id"][1] == "another"  # metadata: as stored


def _says(warnings: list[str], *parts: str) -> None:
    assert any(all(p in w for p in parts) for w in warnings), (parts, warnings)


def test_query_reads_numbers_as_text_and_says_what_it_left_unread(odd: Built, tmp_path: Path):
    question = odd.rows[0]["title"]
    res = run("query", question, "-c", "odd", "--top-k", "10", "--json", env=_env(odd, tmp_path))
    assert res.returncode == 0, res.stderr
    _clean(res)
    resp = Response.model_validate_json(res.stdout)
    body = json.loads(res.stdout)
    _check_results(body["results"])
    _says(resp.warnings, "'text' holds a list", "point 2", "--field text=PATH")
    _says(resp.warnings, "'text' holds an object", "point 4")
    _says(resp.warnings, "'title' holds true/false", "point 5")
    assert not any("'url'" in w for w in resp.warnings)  # 5 is read as "5"
    _says(res.stderr.replace("\n", " ").split("warning: "), "'text' holds a list")


def test_the_http_api_answers_the_same(odd: Built, tmp_path: Path, embedder):
    """``/v1/query`` and ``/v1/query/batch``: 200, the contract's Response with the warnings;
    the server's log line is not the only place that says it."""
    settings = Settings(home=tmp_path / "home", collection="odd", qdrant_url=str(odd.path))
    question = odd.rows[0]["title"]
    with (
        Retriever(settings, embedder=embedder) as retriever,
        run_server(create_app(settings, retriever)) as url,
        httpx.Client(base_url=url, timeout=60) as client,
    ):
        r = client.post("/v1/query", json={"query": question, "top_k": 10})
        assert r.status_code == 200, r.text
        resp = Response.model_validate(r.json())
        _check_results(r.json()["results"])
        _says(resp.warnings, "'text' holds a list", "point 2")
        batch = client.post("/v1/query/batch", json={"queries": [{"query": question}] * 2})
        assert batch.status_code == 200, batch.text
        assert all(x["status"] == "success" for x in batch.json()["responses"])
        listed = client.get("/v1/collections/odd")
        assert listed.status_code == 200, listed.text


def test_eval_counts_document_ids_it_cannot_read(odd: Built, tmp_path: Path):
    bench = _bench(odd, tmp_path)
    args = ("eval", str(bench), "-c", "odd", "--no-throughput", "--no-record", "--json")
    res = run(*args, env=_env(odd, tmp_path))
    _clean(res)
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    hit = {q: row["metrics"]["hit_rate@10"] for q, row in report["per_query"].items()}
    # an integer id matches its text; a list or an object is no id: a miss, and said
    assert hit["t7"] == 1.0
    assert hit["t6"] == 0.0 and hit["t8"] == 0.0
    assert all(hit[f"t{i}"] == 1.0 for i in (0, 1, 2, 3, 4, 5, 9))
    for row in report["per_query"].values():
        _no_python_spelling([doc for doc, _ in row["retrieved"]])
    warnings = report["warnings"]
    _says(warnings, "'doc_id' holds a list", "not a document id", "point 6")
    _says(warnings, "'doc_id' holds an object", "point 8")
    _says(warnings, "'text' holds a list", "point 2")


def test_explain_blames_an_id_kept_in_a_list_and_text_that_is_not_text(odd: Built, tmp_path: Path):
    """The document kept under ``[id, "another"]`` ranks first, but no hit counts as it:
    ``explain`` blamed the ranking ("ranks beyond the documents searched; score 1.0"). A
    document whose text is a list was blamed on no_text without saying why."""
    bench, env = _bench(odd, tmp_path), _env(odd, tmp_path)
    res = run("explain", str(bench), "-c", "odd", "-q", "t6", "--k", "3", "--json", env=env)
    _clean(res)
    assert res.returncode == 0, res.stderr
    (miss,) = json.loads(res.stdout)["per_query"]["t6"]["misses"]
    step = miss["steps"][0]
    assert miss["stage"] == "not_in_collection" and step["outcome"] == "blamed"
    assert "no document id" in step["detail"] and "point 6 (a list)" in step["detail"]
    res = run("explain", str(bench), "-c", "odd", "-q", "x2", "--k", "1", "--json", env=env)
    _clean(res)
    (miss,) = json.loads(res.stdout)["per_query"]["x2"]["misses"]
    assert miss["stage"] == "no_text", miss
    no_text = next(s for s in miss["steps"] if s["stage"] == "no_text")
    assert "point 2: 'text' holds a list" in no_text["detail"]


def test_traffic_runs_on_the_collection(odd: Built, tmp_path: Path):
    """Its calibration samples sentences of the chunks' text: a list's spelling was one."""
    bench = _bench(odd, tmp_path)
    res = run("traffic", str(bench), "-c", "odd", "--json", env=_env(odd, tmp_path))
    _clean(res)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["queries"]


def test_tune_counts_document_ids_it_cannot_read(odd: Built, tmp_path: Path):
    """tune read a hit's document as ``str(value)``: the list's spelling, a document no
    benchmark names, with not a word."""
    bench = _bench(odd, tmp_path)
    args = ("tune", str(bench), "-c", "odd", "--folds", "2", "--mode", "dense", "--json")
    res = run(*args, env=_env(odd, tmp_path))
    _clean(res)
    assert res.returncode == 0, res.stderr
    warnings = json.loads(res.stdout)["warnings"]
    _says(warnings, "'doc_id' holds a list", "in 1 point (the first: point 6)")
    _says(warnings, "'doc_id' holds an object", "point 8")


def test_generate_reads_no_python_spelling_as_a_question_or_an_id(odd: Built, tmp_path: Path):
    """generate read the payload with ``str()``: a list's spelling became a question's source
    and a relevant id, and a ``chunk_index`` of "first" stopped it with a traceback."""
    out = tmp_path / "gen.jsonl"
    args = ("generate", "-c", "odd", "--n", "10", "--method", "gist", "--out", str(out))
    res = run(*args, env=_env(odd, tmp_path))
    _clean(res)
    assert res.returncode == 0, res.stderr
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows
    ids = {r["_id"] for r in odd.rows} | {str(i) for i in range(10)}  # a point id: its own doc
    for row in rows:
        assert not any(c in row["query"] for c in "[]{}"), row
        assert set(row["relevant"]) <= ids, row
