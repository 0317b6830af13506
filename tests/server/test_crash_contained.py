"""Issue 33.1: native code cannot take the server down, and no lone surrogate reaches it.

The example: ``POST /v1/eval`` with an uploaded benchmark whose ``query_id`` is ``"\\udc80"``
segfaulted ``ragsonde serve`` inside trec_eval, failing a third of the good queries in flight and
losing the eval job queued before it. The class: trec_eval runs in a worker process
(:mod:`ragsonde.server.workers`) that a crash ends alone, and text is checked where it enters.
The crash below is real: trec_eval given a lone surrogate, in the worker.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import httpx
import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.evaluate.metrics import compute_metrics, native_runner, native_scores
from ragsonde.models.text import invalid_text_in
from ragsonde.server.workers import WorkerPool
from tests.support import TEXTS, home_env, run, serve_process

LONE = "\udc80"
GOOD_PASS = (["ndcg@10", "recall@10"], {"q1": {"a": 1, "b": 2}}, {"q1": {"a": 0.9, "c": 0.5}})
#: What crashed the server: trec_eval over a query id that is a lone surrogate.
CRASHING_PASS = (["ndcg@10"], {LONE: {"a": 1}}, {LONE: {"a": 1.0}})


@pytest.mark.slow  # starts worker processes
def test_a_crash_in_the_worker_is_an_error_with_a_message_and_the_next_call_works():
    workers = WorkerPool()
    try:
        expected = native_scores([GOOD_PASS])  # in this process: the oracle
        assert workers.run(native_scores, [GOOD_PASS]) == expected
        with pytest.raises(QueryValidationError, match="died during this job") as err:
            workers.run(native_scores, [CRASHING_PASS])  # a real segfault, in the worker
        assert err.value.field == "benchmark" and workers.crashes == 1
        assert workers.run(native_scores, [GOOD_PASS]) == expected  # a fresh worker
    finally:
        workers.close()


@pytest.mark.slow  # starts a worker process
def test_compute_metrics_through_the_worker_equals_in_process():
    qrels = {f"q{i}": {f"d{j}": j % 3 for j in range(i % 5 + 1)} for i in range(40)}
    run = {f"q{i}": {f"d{j}": 1.0 / (j + 1) for j in range(0, 9, i % 3 + 1)} for i in range(40)}
    names = ["ndcg@10", "recall@5", "mrr", "judged@3"]
    workers = WorkerPool()
    try:
        with native_runner(lambda passes: workers.run(native_scores, passes)):
            isolated = compute_metrics(names, qrels, run, judged_only=True)
    finally:
        workers.close()
    assert isolated == compute_metrics(names, qrels, run, judged_only=True)


@pytest.mark.parametrize(
    ("qrels", "run", "field"),
    [
        ({LONE: {"a": 1}}, {LONE: {"a": 1.0}}, "query_id"),
        ({"q": {"a" + LONE: 1}}, {"q": {"a": 1.0}}, "doc_id"),
        ({"q": {"a": 1}}, {"q": {"\ud800b": 1.0}}, "doc_id"),
    ],
)
def test_no_lone_surrogate_reaches_trec_eval(qrels, run, field):
    """Without the check this test does not fail: it kills pytest with SIGSEGV."""
    with pytest.raises(QueryValidationError, match="not valid Unicode") as err:
        compute_metrics(["ndcg@10"], qrels, run)
    assert err.value.field == field and "\ufffd" in err.value.message  # echoed printable


def test_invalid_text_in_finds_keys_and_values_at_any_depth():
    assert invalid_text_in({"a": [1, "ok", {"b": None}], "c": 2.5}) is None
    assert invalid_text_in({"a": [1, {"b": "x" + LONE}]}) == (("a", 1, "b"), "x" + LONE, 1)
    assert invalid_text_in({"a": {LONE: 1}}) == (("a", LONE), LONE, 0)
    deep: object = "ok" + LONE
    for _ in range(5000):  # deeper than Python's recursion limit
        deep = [deep]
    found = invalid_text_in(deep)
    assert found is not None and len(found[0]) == 5000


# -- the example, end to end: a real `ragsonde serve` process --------------------------------------
BENCH = [
    {
        "query_id": "a",
        "query": "how does a laser rangefinder measure distance",
        "relevant": ["lidar"],
    },
    {"query_id": "b", "query": "why does my heading drift over time", "relevant": ["imu"]},
]
BAD_ROW = {"query_id": LONE, "query": "lidar range", "relevant": ["lidar"]}


def _wait(client: httpx.Client, job_id: str) -> dict:
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        job = client.get(f"/v1/eval/{job_id}").json()
        if job["status"] not in {"queued", "running"}:
            return job
        time.sleep(0.3)
    raise AssertionError(f"job {job_id} did not finish")


@pytest.mark.slow  # starts a server process, with the real model
def test_the_segfault_request_among_five_querying_clients(sample_home: Path, tmp_path: Path):
    home = tmp_path / "home"
    shutil.copytree(sample_home, home)  # the server locks its store: a home of its own
    datasets = home / "datasets"
    datasets.mkdir()
    # The same row as a file on the server: read by the job, not by the body's check.
    (datasets / "bad.jsonl").write_text(
        "\n".join(json.dumps(r) for r in [*BENCH, BAD_ROW]) + "\n", encoding="utf-8"
    )
    with serve_process(home) as url, httpx.Client(base_url=url, timeout=120) as client:
        answers: list[int] = []

        def query(worker: int) -> None:
            with httpx.Client(base_url=url, timeout=120) as own:
                for i in range(15):
                    text = TEXTS[(worker + i) % len(TEXTS)]
                    r = own.post("/v1/query", json={"text": text, "collection": "robotics"})
                    answers.append(r.status_code)

        good = client.post("/v1/eval", json={"benchmark": BENCH, "collection": "robotics"})
        assert good.status_code == 202, good.text
        clients = [threading.Thread(target=query, args=(w,)) for w in range(5)]
        for t in clients:
            t.start()
        # ensure_ascii: the lone surrogate travels as the escape \udc80, valid JSON
        raw = json.dumps({"benchmark": [*BENCH, BAD_ROW], "collection": "robotics"})
        bad = client.post("/v1/eval", content=raw, headers={"content-type": "application/json"})
        from_file = client.post("/v1/eval", json={"dataset": "bad.jsonl", "collection": "robotics"})
        for t in clients:
            t.join()

        assert bad.status_code == 422, bad.text  # refused at the door, naming line and field
        error = bad.json()["error"]
        assert error["code"] == "VALIDATION_ERROR"
        assert "benchmark line 3, field 'query_id'" in error["message"]
        assert answers == [200] * 75  # every good query answered
        assert _wait(client, good.json()["job_id"])["status"] == "done"
        assert from_file.status_code == 202, from_file.text
        failed = _wait(client, from_file.json()["job_id"])
        assert failed["status"] == "error" and failed["error"]["message"], failed
        assert failed["error"]["code"] == "VALIDATION_ERROR"
        again = client.post("/v1/eval", json={"benchmark": BENCH, "collection": "robotics"})
        assert _wait(client, again.json()["job_id"])["status"] == "done"  # the server lives on
        assert client.get("/healthz").status_code == 200


def _procs() -> dict[int, tuple[int, bytes]]:
    """pid -> (parent pid, command line) of every process, from /proc."""
    out = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:  # ended meanwhile
                continue
            out[int(entry.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), cmdline)
    return out


@pytest.mark.slow  # starts a server process, with the real model
def test_the_worker_process_ends_with_the_server(sample_home: Path, tmp_path: Path):
    home = tmp_path / "home"
    shutil.copytree(sample_home, home)
    with serve_process(home) as url, httpx.Client(base_url=url, timeout=120) as client:
        port = url.rsplit(":", 1)[1].encode()
        job = client.post("/v1/eval", json={"benchmark": BENCH, "collection": "robotics"})
        assert _wait(client, job.json()["job_id"])["status"] == "done"
        procs = _procs()
        server = next(p for p, (_, cmd) in procs.items() if b"serve\0--port\0" + port in cmd)
        workers = [p for p, (parent, _) in procs.items() if parent == server]
        assert workers, "the eval job ran in no worker process"
    deadline = time.monotonic() + 10  # serve_process has terminated the server (SIGTERM)
    while any(w in _procs() for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(w in _procs() for w in workers)


@pytest.mark.parametrize(
    ("path", "raw", "where"),
    [
        (
            "/v1/eval",
            '{"benchmark": [{"query": "q", "relevant": ["a"]}, {"query": "q", "relevant": '
            '["\\ud800"]}]}',
            "benchmark line 2, field 'relevant.0'",
        ),
        (
            "/v1/traffic",
            '{"records": [{"query": "lidar"}, {"query": "ok", "ids": ["\\udc80"]}]}',
            "records line 2, field 'ids.0'",
        ),
        ("/v1/judge/pool", '{"query": "lidar", "benchmark": "b\\udfff"}', "field 'benchmark'"),
        ("/v1/eval", '{"dataset": "x", "\\ud800": 1}', "field '\ufffd'"),
    ],
)
def test_every_text_of_a_body_is_checked_at_the_door(api, path, raw, where):
    """Each route reading a JSON body refuses a lone surrogate anywhere in it, naming where (an
    uploaded row by its line), before any of it is used."""
    r = api.post(path, content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "VALIDATION_ERROR" and where in error["message"], error
    assert "lone surrogate" in error["message"]


@pytest.mark.slow  # a real process, with the real model
def test_the_same_row_from_the_cli_is_a_validation_error_not_a_segfault(
    sample_home: Path, tmp_path: Path
):
    """`ragsonde eval` on the row exited 139 with no message: whatever reads the file, the
    ids reach trec_eval only through the check at the metric boundary."""
    home = tmp_path / "home"
    shutil.copytree(sample_home, home)
    bench = tmp_path / "bad.jsonl"
    bench.write_text("\n".join(json.dumps(r) for r in [*BENCH, BAD_ROW]) + "\n", "utf-8")
    before = bench.read_bytes()
    out = run("eval", str(bench), "--collection", "robotics", "--no-record", env=home_env(home))
    assert out.returncode == 2, (out.returncode, out.stderr[-2000:])
    assert "VALIDATION_ERROR" in out.stderr and "Traceback" not in out.stderr + out.stdout
    assert bench.read_bytes() == before
