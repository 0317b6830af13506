"""The bounds of ``/v1/eval`` (issue 13.4): datasets only from the server's dataset folders, with
one answer for every other path; a cap on queued and running jobs (429 + Retry-After); cancel."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ragsonde.server import create_app
from tests.support import run_server

pytestmark = pytest.mark.slow  # the real model behind a real server

LONG = [
    {"query_id": f"q{i}", "query": f"how does lidar measure distance {i}", "relevant": ["lidar"]}
    for i in range(400)
]


def test_every_path_outside_the_dataset_folders_gets_the_same_answer(api, server_settings):
    folder = server_settings.home / "datasets"
    folder.mkdir(parents=True, exist_ok=True)
    escape = folder / "escape.jsonl"
    if not escape.is_symlink():
        escape.symlink_to("/etc/passwd")  # a link inside the folder that leads out of it
    names = [
        "/etc/passwd",  # exists
        "/no/such/bench.jsonl",  # does not
        "../../../../../../etc/passwd",
        "escape.jsonl",
        "/dev/zero",
        "bad\x00name",
        str(folder),  # the folder itself
        "missing.jsonl",  # inside the folder, but not there
    ]
    answers = [api.post("/v1/eval", json={"dataset": n, "k": [1]}) for n in names]
    assert {r.status_code for r in answers} == {422}
    errors = [r.json()["error"] for r in answers]
    assert errors[0]["code"] == "VALIDATION_ERROR" and "dataset folders" in errors[0]["message"]
    assert all(e == errors[0] for e in errors), errors
    assert all(r.json()["status"] == "error" for r in answers)
    assert not any("root:" in r.text for r in answers)


@pytest.mark.parametrize(
    ("rows", "options", "said"),
    [
        (
            [{"query_id": "a", "query": "lidar", "relevant": ["lidar"]}] * 2,
            {},
            "query_id values repeat",
        ),
        ([{"query": "lidar"}], {}, "none of its 1 queries is labelled"),
        ([{"query": "lidar"}], {}, "`ragsonde judge BENCHMARK.jsonl -c COLLECTION"),
        ([{"relevant": ["lidar"]}], {}, 'entry 1 needs "query"'),
        ([{"query": "lidar", "relevant": [{"id": 1, "grade": "high"}]}], {}, "not an id"),
        # an estimate keeps unlabelled rows, and refuses a benchmark of no labelled one
        ([{"query": "lidar"}], {"estimate": True}, "an estimate rests on some a person"),
        ([{"query": "lidar"}], {"estimate": True}, "`ragsonde traffic BENCHMARK.jsonl -c"),
    ],
)
def test_a_bad_upload_is_refused_at_the_door(api, server_settings, rows, options, said):
    """Uploaded rows were read only in the job: a 202, a job slot taken, then an error naming
    a file on the server the client never named. Read at the door, they were named by editing
    the message's text; now the reader names them "the uploaded benchmark" itself."""
    jobs = len(api.get("/v1/eval").json())
    r = api.post("/v1/eval", json={"benchmark": rows, "k": [1], **options})
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "VALIDATION_ERROR"
    assert error["message"].startswith("Cannot read the uploaded benchmark: ")
    assert said in error["message"] and str(server_settings.home) not in error["message"]
    assert "/tmp" not in error["message"] and "upload.jsonl" not in error["message"]
    assert len(api.get("/v1/eval").json()) == jobs  # no job made


def _finished(api: httpx.Client, body: dict[str, object]) -> dict[str, Any]:
    r = api.post("/v1/eval", json=body)
    assert r.status_code == 202, r.text
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job: dict[str, Any] = api.get(f"/v1/eval/{r.json()['job_id']}").json()
        if job["status"] in {"done", "error", "cancelled"}:
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {r.json()['job_id']} never finished")


LABELLED = [
    {
        "query_id": "a",
        "query": "how does a laser rangefinder measure distance",
        "relevant": ["lidar"],
    },
    {"query_id": "b", "query": "why does my heading drift over time", "relevant": ["imu"]},
    {"query_id": "c", "query": "lithium battery safe voltage", "relevant": ["lipo"]},
    {"query_id": "d", "query": "gyroscope bias"},  # unlabelled: an estimate predicts it
]


def test_a_jobs_error_names_the_upload_not_the_servers_copy_of_it(api, server_settings):
    """The job reads the rows from its own copy, ``<home>/eval-reports/<id>.benchmark.jsonl``:
    ``predictor: judge`` on rows with no LLM label failed saying "the benchmark
    /…/home/eval-reports/<id>.benchmark.jsonl carries no LLM labels" to the client."""
    body = {"benchmark": LABELLED, "k": [1], "estimate": True, "throughput": False}
    job = _finished(api, {**body, "predictor": "judge"})
    assert job["status"] == "error", job
    message = job["error"]["message"]
    assert message.startswith("predictor 'judge': the uploaded benchmark carries no LLM labels")
    assert str(server_settings.home) not in message and ".benchmark.jsonl" not in message
    # the same upload, with a predictor it can serve: it runs, and names itself as before
    done = _finished(api, body)
    assert done["status"] == "done", done["error"]
    assert done["report"]["dataset"] == "uploaded benchmark"
    assert done["report"]["metrics_ci"] and done["progress"]["total"] == len(LABELLED)


def test_a_datasets_error_names_it_as_the_request_did(api, server_settings):
    """A dataset is read in the job (only its path is checked at the door): its errors named
    the path it resolved to in the server's folders, which the report never shows."""
    folder = server_settings.home / "datasets"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "twice.jsonl").write_text(
        '{"query_id": "a", "query": "lidar", "relevant": ["lidar"]}\n' * 2, encoding="utf-8"
    )
    job = _finished(api, {"dataset": "twice.jsonl", "k": [1]})
    assert job["status"] == "error", job
    message = job["error"]["message"]
    assert message == "Cannot read benchmark twice.jsonl: query_id values repeat", message


@pytest.fixture
def capped(server_settings, retriever) -> Iterator[httpx.Client]:
    settings = server_settings.model_copy(update={"eval_max_jobs": 2, "max_body_bytes": 1_048_576})
    with run_server(create_app(settings, retriever)) as url, httpx.Client(base_url=url) as c:
        yield c


def _post(client: httpx.Client) -> httpx.Response:
    return client.post("/v1/eval", json={"benchmark": LONG, "k": [1]}, timeout=30)


def _wait(client: httpx.Client, job_id: str, status: str) -> dict[str, object]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job: dict[str, object] = client.get(f"/v1/eval/{job_id}", timeout=30).json()
        if job["status"] == status:
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} never became {status}")


def test_the_job_cap_answers_429_and_delete_cancels(capped: httpx.Client) -> None:
    first, second = _post(capped), _post(capped)
    assert (first.status_code, second.status_code) == (202, 202), second.text
    one, two = first.json()["job_id"], second.json()["job_id"]
    _wait(capped, one, "running")
    full = _post(capped)
    assert full.status_code == 429 and int(full.headers["retry-after"]) > 0
    assert full.json()["error"]["code"] == "VALIDATION_ERROR"
    assert "DELETE" in full.json()["error"]["message"]

    # queued: removed, never runs, and its slot is free again
    gone = capped.delete(f"/v1/eval/{two}")
    assert gone.status_code == 200 and gone.json()["status"] == "cancelled"
    assert capped.get(f"/v1/eval/{two}").status_code == 404
    third = _post(capped)
    assert third.status_code == 202

    # running: stops at its next query
    assert capped.delete(f"/v1/eval/{one}").status_code == 200
    stopped = _wait(capped, one, "cancelled")
    progress = stopped["progress"]
    assert isinstance(progress, dict) and progress["done"] < progress["total"] == len(LONG)
    assert stopped["report"] is None

    three = third.json()["job_id"]
    _wait(capped, three, "running")
    assert capped.delete(f"/v1/eval/{three}").status_code == 200
    _wait(capped, three, "cancelled")
    assert capped.delete(f"/v1/eval/{three}").status_code == 200  # finished: forgotten
    missing = capped.delete(f"/v1/eval/{three}")
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "VALIDATION_ERROR"


@pytest.mark.parametrize("option", ["queries_file", "plan_file"])
def test_a_file_an_option_names_is_read_only_inside_the_dataset_folders(
    api, server_settings, option
):
    """``queries_file`` was read from anywhere: a TREC qrels dataset with
    ``"queries_file": "/any/file"`` had the server read that file, and its lines came back in
    the report. Each file an option names now gets the dataset's one refusal outside the
    dataset folders, whether or not it exists."""
    folder = server_settings.home / "datasets"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "legit.qrels").write_text("q1 0 d1 1\n", encoding="utf-8")
    (folder / "inside.tsv").write_text("q1\tlidar range\n", encoding="utf-8")
    body = {"dataset": "legit.qrels", "k": [1], "throughput": False, "estimate": True}
    names = ["/etc/passwd", "/no/such/file.tsv", "../../../../etc/passwd", str(folder)]
    answers = [api.post("/v1/eval", json={**body, option: n}) for n in names]
    assert {r.status_code for r in answers} == {422}
    errors = [r.json()["error"] for r in answers]
    assert "dataset folders" in errors[0]["message"] and "root:" not in answers[0].text
    assert all(e == errors[0] for e in errors), errors
    accepted = api.post("/v1/eval", json={**body, option: "inside.tsv"})
    assert accepted.status_code == 202, accepted.text
    api.delete(f"/v1/eval/{accepted.json()['job_id']}")


def test_max_top_k_holds_on_every_route_that_searches(api, server_settings) -> None:
    """``/v1/traffic`` replayed at ``top_k`` 100,000 and ``/v1/eval`` ran with it: the
    contract's ``max_top_k`` was checked on ``/v1/query`` only."""
    most = server_settings.max_top_k
    rows = [{"query_id": "q1", "query": "how does lidar work", "relevant": ["lidar"]}]
    answers = {
        "search.top_k": api.post(
            "/v1/traffic", json={"records": [{"query": "lidar"}], "search": {"top_k": most + 1}}
        ),
        "k": api.post("/v1/eval", json={"benchmark": rows, "k": [most + 1]}),
    }
    answers["eval search.top_k"] = api.post(
        "/v1/eval", json={"benchmark": rows, "search": {"top_k": 100_000}}
    )
    for field, r in answers.items():
        assert r.status_code == 422, (field, r.text)
        error = r.json()["error"]
        assert error["code"] == "VALIDATION_ERROR" and f"max_top_k = {most}" in error["message"]
    at_most = api.post(
        "/v1/traffic", json={"records": [{"query": "lidar"}], "search": {"top_k": most}}
    )
    assert at_most.status_code == 200, at_most.text
