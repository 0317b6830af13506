"""The page's reports view opens a span-labelled evaluation with the answer marked in its hits:
a real server, the real model, real ingest into the server's store, headless Chromium."""

from __future__ import annotations

import time
from typing import Any

from playwright.sync_api import expect

from ragsonde.ingest import IngestOptions, ingest_documents, open_source

TEXT = (
    "The dock has two charging contacts. A lidar times laser pulses to measure the distance to "
    "each wall, and its <b>window</b> must stay clean. The gyroscope drifts a little every "
    "minute, so the heading is corrected against the map.\n"
)
EXCERPT = "times laser pulses to measure the distance to each wall, and its <b>window</b>"


def wait_done(api: Any, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job: dict[str, Any] = api.get(f"/v1/eval/{job_id}").json()
        if job["status"] in {"done", "error", "cancelled"}:
            return job
        time.sleep(0.2)
    raise AssertionError("the evaluation job did not finish")


def _spanned_collection(tmp_path, store, embedder) -> None:
    """``robot`` ingested in small, overlapping chunks: their spans are in the payloads."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "robot.txt").write_text(TEXT, encoding="utf-8")
    ingest_documents(
        open_source(str(folder)),
        store=store,
        embedder=embedder,
        collection="spanned",
        options=IngestOptions(chunk_size=24, chunk_overlap=8),
    )


def test_the_reports_view_opens_the_answer_marked_in_the_hits(
    page, api, tmp_path, filled_store, embedder
):
    _spanned_collection(tmp_path, filled_store, embedder)
    start = TEXT.index(EXCERPT)
    row = {
        "query": "How does the lidar measure distance?",
        "references": [{"doc_id": "robot", "start": start, "end": start + len(EXCERPT)}],
    }
    resp = api.post("/v1/eval", json={"benchmark": [row], "collection": "spanned", "k": [5]})
    assert resp.status_code == 202, resp.text
    job = wait_done(api, resp.json()["job_id"])
    assert job["status"] == "done", job["error"]
    [qrow] = job["report"]["per_query"].values()
    hits = qrow["hits"]
    expected = [
        TEXT[max(h["start"], start) : min(h["end"], start + len(EXCERPT))]
        for h in hits
        if h["start"] < start + len(EXCERPT) and start < h["end"]
    ]
    assert len(expected) >= 2  # the answer spans chunks

    page.click("#show-reports")
    listed = page.locator(f'#reports tr.job.done[data-job-id="{job["job_id"]}"]')
    expect(listed).to_be_visible(timeout=20_000)
    with page.context.expect_page() as popup:
        listed.locator("a.open-report").click()
    report = popup.value
    report.wait_for_load_state()
    marks = report.locator("#highlights mark")
    expect(marks.first).to_be_visible()
    # each chunk's part of the answer, as text: the <b> in the chunk is shown, not rendered
    assert marks.all_text_contents() == expected
    assert report.locator("#highlights b").count() == 0
    assert not page.problems and not page.dialogs


def test_a_collection_without_spans_shows_no_marks(api):
    row = {
        "query": "how does a laser rangefinder measure distance",
        "references": [{"doc_id": "lidar", "start": 0, "end": 5}],
    }
    resp = api.post("/v1/eval", json={"benchmark": [row], "k": [3]})
    job = wait_done(api, resp.json()["job_id"])
    assert job["status"] == "done", job["error"]
    assert job["report"]["spans"]["available"] is False
    html = api.get(f"/v1/eval/{job['job_id']}/report.html").text
    assert "spans not available" in html and "<mark>" not in html
