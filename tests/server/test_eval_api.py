"""``/v1/eval``: background evaluation jobs over HTTP, and the page's reports view."""

from __future__ import annotations

import json
import time

import httpx
from playwright.sync_api import expect

from ragsonde.server import create_app
from tests.support import run_server

BENCH = [
    {
        "query_id": "a",
        "query": "how does a laser rangefinder measure distance",
        "relevant": ["lidar"],
    },
    {"query_id": "b", "query": "why does my heading drift over time", "relevant": ["imu"]},
    {"query_id": "c", "query": "lithium battery safe voltage", "relevant": ["lipo"]},
]


def wait_done(api, job_id: str) -> dict:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = api.get(f"/v1/eval/{job_id}").json()
        if job["status"] in {"done", "error", "cancelled"}:
            return job
        time.sleep(0.2)
    raise AssertionError("the evaluation job did not finish")


def start(api, **body) -> dict:
    resp = api.post("/v1/eval", json={"benchmark": BENCH, "k": [1, 3], **body})
    assert resp.status_code == 202, resp.text
    return resp.json()


def test_uploaded_benchmark_runs_as_a_job(api):
    job = start(api, gates=["hit_rate@3>=0.5", "ndcg@1>=1.01"])
    assert job["status"] in {"queued", "running"} and job["links"]["status"].endswith(job["job_id"])
    done = wait_done(api, job["job_id"])
    assert done["status"] == "done", done["error"]
    report = done["report"]
    assert report["n_queries"] == 3 and report["collection"] == "docs"
    assert report["dataset"] == "uploaded benchmark"
    assert report["metrics"]["hit_rate@3"] == 1.0
    assert done["progress"] == {"done": 3, "total": 3}
    assert [g["passed"] for g in report["gates"]] == [True, False] and done["passed"] is False
    html = api.get(f"/v1/eval/{job['job_id']}/report.html")
    assert html.status_code == 200 and "<svg" in html.text
    listed = api.get("/v1/eval").json()
    assert any(j["job_id"] == job["job_id"] for j in listed)


def test_dataset_path_on_the_server(api, server_settings):
    folder = server_settings.home / "datasets"  # the default dataset folder
    folder.mkdir(parents=True, exist_ok=True)
    bench = folder / "bench.jsonl"
    bench.write_text('{"query": "A* heuristic search", "relevant": ["astar"]}\n')
    for name in ("bench.jsonl", str(bench)):  # by name, or by its full path inside the folder
        resp = api.post("/v1/eval", json={"dataset": name, "k": [1]})
        done = wait_done(api, resp.json()["job_id"])
        assert done["status"] == "done" and done["report"]["metrics"]["ndcg@1"] == 1.0
        # the report names the dataset as the request did: never the server's own folders
        assert done["report"]["dataset"] == name
        saved = api.get(f"/v1/eval/{done['job_id']}/report.html").text
        assert str(server_settings.home) not in saved or name == str(bench)


def test_bad_requests_are_contract_errors(api):
    both = api.post("/v1/eval", json={"benchmark": BENCH, "dataset": "/x"})
    assert both.status_code == 422 and both.json()["error"]["code"] == "VALIDATION_ERROR"
    missing = api.post("/v1/eval", json={"dataset": "/no/such/bench.jsonl"})
    assert missing.status_code == 422 and "dataset folders" in missing.json()["error"]["message"]
    device = api.post("/v1/eval", json={"dataset": "/dev/zero"})  # would never finish loading
    assert device.status_code == 422 and device.json()["error"] == missing.json()["error"]
    wrong = api.post("/v1/eval", json={"benchmark": BENCH, "relevance_by": "paragraph"})
    assert wrong.status_code == 422 and "relevance_by" in wrong.json()["error"]["message"]
    assert api.get("/v1/eval/nope").status_code == 404
    job = start(api, collection="no_such_collection")
    done = wait_done(api, job["job_id"])
    assert done["status"] == "error" and done["error"]["code"] == "COLLECTION_NOT_FOUND"
    assert api.get(f"/v1/eval/{job['job_id']}/report.html").status_code == 409


def test_reports_view_lists_and_opens_reports(page, api):
    job = start(api)
    wait_done(api, job["job_id"])
    # every tab of the context: the report's own (its /favicon.ico was a 404 in the console)
    page.context.on("console", lambda m: m.type == "error" and page.problems.append(m.text))
    page.click("#show-reports")
    row = page.locator("#reports tr.job.done >> nth=0")
    expect(row).to_be_visible(timeout=20_000)
    assert page.locator("#search-view").is_hidden()
    with page.context.expect_page() as popup:
        row.locator("a.open-report").click()
    report = popup.value
    report.wait_for_load_state()
    assert report.locator("svg.plot").count() >= 3
    report.wait_for_timeout(500)  # the browser asks for the icon after the load
    page.click("#show-search")
    assert page.locator("#search-view").is_visible()
    assert not page.problems and not page.dialogs


def test_one_options_model_errors_name_fields_and_the_openapi_has_the_report(api, validate_report):
    bad = api.post("/v1/eval", json={"benchmark": BENCH, "k": [0, 5]})
    assert bad.status_code == 422
    err = bad.json()["error"]
    assert err["code"] == "VALIDATION_ERROR" and err["message"].startswith("k: cutoffs must be")
    assert "--" not in err["message"]  # a field, never a CLI flag
    gate = api.post("/v1/eval", json={"benchmark": BENCH, "gates": ["ndcg@10 is good"]})
    assert gate.status_code == 422 and gate.json()["error"]["message"].startswith("gates: Bad gate")
    # every evaluation option works over HTTP, as in the library and the CLI
    job = start(api, sweep_thresholds=True, by="section")
    done = wait_done(api, job["job_id"])
    assert done["status"] == "done", done["error"]
    validate_report(done["report"])
    assert done["report"]["threshold_sweep"]["recommended_setting"].startswith("score_threshold=")
    assert done["report"]["breakdown"]["by"]["field"] == "section"
    spec = api.get("/openapi.json").json()
    body = spec["paths"]["/v1/eval"]["post"]["requestBody"]["content"]["application/json"]
    assert {"k", "relevance_by", "gates", "by", "sweep_thresholds", "benchmark", "dataset"} <= set(
        body["schema"]["properties"]
    )
    ok = spec["paths"]["/v1/eval/{job_id}"]["get"]["responses"]["200"]["content"]
    status_ref = ok["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    report = spec["components"]["schemas"][status_ref]["properties"]["report"]
    assert any(alt.get("$ref", "").endswith("/EvalReport") for alt in report.get("anyOf", [report]))


def test_saved_reports_outlive_the_server_and_bad_files_are_listed_not_500(
    api, server_settings, retriever
):
    job = start(api, k=[1, 10])
    done = wait_done(api, job["job_id"])
    assert done["status"] == "done", done["error"]
    assert set(done["metrics"]) == {"ndcg@10", "recall@10", "judged@10"}
    folder = server_settings.home / "eval-reports"
    bad = {
        "broken-l15": "{not json",
        "future-l15": json.dumps({**done["report"], "schema_version": "2.0"}),
        "list-l15": "[1, 2]",
    }
    for name, text in bad.items():
        (folder / f"{name}.json").write_text(text, encoding="utf-8")
    try:
        # A second server on the same home, as after a restart: no job in memory, the files.
        with (
            run_server(create_app(server_settings, retriever)) as url,
            httpx.Client(base_url=url, timeout=30) as again,
        ):
            listed = again.get("/v1/eval")
            assert listed.status_code == 200, listed.text
            rows = {r["job_id"]: r for r in listed.json()}
            times = [r["created_at"] for r in listed.json()]
            assert times == sorted(times, reverse=True)  # newest first (all UTC isoformat)
            mine = rows[job["job_id"]]
            assert mine["saved"] is True and mine["status"] == "done"
            assert mine["metrics"] == done["metrics"] and mine["passed"] == done["passed"]
            assert mine["progress"] == {"done": 3, "total": 3}
            assert mine["dataset"] == "uploaded benchmark" and mine["collection"] == "docs"
            for name in bad:
                row = rows[name]
                assert row["status"] == "unreadable" and "html" not in row["links"]
                assert row["error"]["code"] == "VALIDATION_ERROR"
                assert str(folder) not in row["error"]["message"]  # no server path
                assert f"{name}.json" in row["error"]["message"]
            assert "schema version 2.0" in rows["future-l15"]["error"]["message"]
            assert "not a saved report" in rows["list-l15"]["error"]["message"]

            back = again.get(f"/v1/eval/{job['job_id']}").json()
            assert back["report"] == done["report"] and back["saved"] is True
            html = again.get(mine["links"]["html"])
            assert html.status_code == 200 and "<svg" in html.text
            broken = again.get("/v1/eval/broken-l15")
            assert broken.status_code == 200 and broken.json()["report"] is None
            refused = again.get("/v1/eval/broken-l15/report.html")
            assert refused.status_code == 409
            assert refused.json()["error"] == rows["broken-l15"]["error"]
            for nosuch in ("..%2Feval-reports%2Fbroken-l15", "nope", "broken-l15.json"):
                assert again.get(f"/v1/eval/{nosuch}").status_code == 404

            # Forgotten: the files go, on every server that reads the home.
            assert again.delete(f"/v1/eval/{job['job_id']}").status_code == 200
            assert not list(folder.glob(f"{job['job_id']}*"))
            assert again.get(f"/v1/eval/{job['job_id']}").status_code == 404
    finally:
        for name in bad:
            (folder / f"{name}.json").unlink(missing_ok=True)


def test_eval_over_http_explains_its_misses(api):
    """``explain`` on /v1/eval: the report carries the misses section, its counts adding up to
    the misses of the report's own run at that k."""
    # a label that no search puts first: at least one miss to explain
    bench = [
        *BENCH,
        {"query_id": "d", "query": "lithium battery safe voltage", "relevant": ["imu"]},
    ]
    resp = api.post(
        "/v1/eval", json={"benchmark": bench, "k": [1, 3], "explain": True, "explain_k": 1}
    )
    assert resp.status_code == 202, resp.text
    done = wait_done(api, resp.json()["job_id"])
    assert done["status"] == "done", done["error"]
    report = done["report"]
    misses = report["misses"]
    assert misses["k"] == 1
    top1 = {q: [d for d, _ in row["retrieved"][:1]] for q, row in report["per_query"].items()}
    expected = sum(
        1 for row in bench for doc in row["relevant"] if doc not in top1[row["query_id"]]
    )
    assert expected >= 1
    assert misses["pairs"] == sum(misses["counts"].values()) == expected
    assert "d" in misses["per_query"]
    bad = api.post("/v1/eval", json={"benchmark": BENCH, "explain": True, "explain_k": 0})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "VALIDATION_ERROR"


def test_an_estimated_and_explained_job_is_recorded_with_its_intervals(api):
    """``estimate`` and ``explain`` in one job: both run before the report is timed and
    recorded, so the server's history holds the run with its intervals."""
    unlabelled = [
        {"query_id": "u1", "query": "what does the ultrasonic sensor measure"},
        {"query_id": "u2", "query": "how long does the battery last"},
    ]
    resp = api.post("/v1/eval", json={"benchmark": BENCH + unlabelled, "k": [1, 3],
                                      "estimate": True, "explain": True, "explain_k": 3})  # fmt: skip
    assert resp.status_code == 202, resp.text
    done = wait_done(api, resp.json()["job_id"])
    assert done["status"] == "done", done["error"]
    report = done["report"]
    e = report["metrics_ci"]["hit_rate@3"]
    assert (e["n_labeled"], report["n_queries"]) == (3, 5) and report["misses"] is not None
    runs = api.get("/v1/history/runs").json()["runs"]
    recorded = next(r for r in runs if r["created_at"] == report["created_at"])
    assert recorded["metrics_ci"] == report["metrics_ci"]
    assert recorded["seconds"] == report["seconds"]
