"""Judging in a real Chromium: from an empty benchmark to an evaluated one, in the page alone,
and the report still there after the server restarts."""

from __future__ import annotations

import json
import re
import uuid

import pytest
from playwright.sync_api import expect

from ragsonde.evaluate import EvalOptions
from tests.support import evaluate_in, serve_process

pytestmark = pytest.mark.slow

QUERY = "how does a laser rangefinder measure distance"


def pool(page) -> None:
    before = page.get_attribute("#hits", "data-seq")
    page.click("#judge-go")
    expect(page.locator("#hits")).not_to_have_attribute("data-seq", before, timeout=20_000)


def grade_with_key(page, doc: str, key: str) -> None:
    before = page.get_attribute("#hits", "data-saved") or "0"
    page.locator(f'#hits .hit[data-doc-id="{doc}"]').focus()
    page.keyboard.press(key)
    expect(page.locator("#hits")).to_have_attribute("data-saved", str(int(before) + 1))


def judged_at_10(report) -> str:
    """The judged@10 cell of an opened HTML report's metrics table."""
    report.wait_for_load_state()
    ks = [
        k.strip("@") for k in report.locator("#metrics tr").first.locator("th").all_text_contents()
    ]
    row = report.locator("#metrics tr", has=report.locator("th", has_text=re.compile("^judged$")))
    return row.locator("td").all_text_contents()[ks.index("10") - 1]


def test_judge_reload_export_and_evaluate(
    page, base_url, tmp_path, server_settings, filled_store, embedder
):
    name = f"web-{uuid.uuid4().hex[:8]}"
    page.click("#show-judge")
    page.fill("#judge-benchmark", name)
    page.fill("#judge-name", "ana")
    page.locator("#judge-name").dispatch_event("change")
    page.fill("#judge-query", QUERY)
    pool(page)
    hits = page.locator("#hits .hit")
    n = hits.count()
    assert n >= 3
    assert page.locator("#hits .score").count() == 0  # blind: no score shown
    assert [hits.nth(i).locator(".rank").text_content() for i in range(2)] == ["#1", "#2"]
    order = page.eval_on_selector_all("#hits .hit", "hs => hs.map(h => h.dataset.chunkId)")
    other = page.locator("#hits .hit:not([data-doc-id='lidar'])").first.get_attribute("data-doc-id")

    grade_with_key(page, "lidar", "3")
    grade_with_key(page, other, "0")
    expect(page.locator("#judge-status")).to_have_text(f"2 of {n} hits judged · modes dense")
    expect(page.locator("#hits .hit[data-doc-id='lidar'] .grade.on")).to_have_text("3")
    page.screenshot(path=str(tmp_path / "judge.png"), full_page=True)

    # Reload: the view, the query and every grade come back; the order does not change.
    page.reload()
    expect(page.locator("#judge-view")).to_be_visible()
    expect(page.locator("#hits .hit[data-doc-id='lidar']")).to_have_attribute("data-grade", "3")
    expect(page.locator(f"#hits .hit[data-doc-id='{other}']")).to_have_attribute("data-grade", "0")
    assert page.eval_on_selector_all("#hits .hit", "hs => hs.map(h => h.dataset.chunkId)") == order
    expect(page.locator("#judge-queries-list .judged-query")).to_have_text([f"2 judged · {QUERY}"])

    with page.expect_download() as download:
        page.click("#judge-export")
    exported = tmp_path / "exported.jsonl"
    download.value.save_as(exported)
    (row,) = [json.loads(line) for line in exported.read_text().splitlines()]
    assert row["relevant"] == {"lidar": 3, other: 0}
    assert {(lab["id"], lab["grade"], lab["judge"], lab["source"]) for lab in row["labels"]} == {
        ("lidar", 3, "ana", "human"),
        (other, 0, "ana", "human"),
    }

    # The exported file, evaluated by the library: lidar (graded 3) comes first for this query.
    report = evaluate_in(
        exported,
        collection="docs",
        settings=server_settings,
        store=filled_store,
        embedder=embedder,
        options=EvalOptions(k=[1, 10], throughput=False),
    )
    (q,) = report.per_query.values()
    assert q.relevant == {"lidar": 3, other: 0}
    assert q.retrieved[0][0] == "lidar"
    assert report.metrics["ndcg@10"] == pytest.approx(1.0)
    assert report.metrics["mrr"] == pytest.approx(1.0)
    assert report.metrics["judged@10"] == pytest.approx(2 / len(q.retrieved))

    # And by the page: the reports view starts an evaluation of the benchmark and shows it.
    page.click("#show-reports")
    page.fill("#eval-dataset", name)
    page.fill("#eval-collection", "docs")
    page.click("#eval-go")
    row_node = page.locator("#reports tbody tr", has_text=f"{name}.jsonl").first
    expect(row_node).to_have_class("job done", timeout=60_000)
    judged = f"{report.metrics['judged@10']:.4f}"
    assert row_node.locator("td").all_text_contents()[5:7] == ["1.0000", judged]  # nDCG, judged
    job_id = row_node.get_attribute("data-job-id")
    page.screenshot(path=str(tmp_path / "reports.png"), full_page=True)
    # The report opens, with its judged@10.
    with page.context.expect_page() as popup:
        row_node.locator("a.open-report").click()
    assert judged_at_10(popup.value) == judged

    # A restart: a new server process on the same home holds no job in memory, yet its reports
    # view lists the saved report, and opens it.
    # A file that is no report is listed as unreadable, with the reason, and cannot be opened.
    broken = server_settings.home / "eval-reports" / f"{name}-broken.json"
    broken.write_text("{not json", encoding="utf-8")
    with serve_process(server_settings.home, "-c", "docs") as second:
        page.goto(f"{second}/")
        page.click("#show-reports")
        saved = page.locator(f'#reports tbody tr[data-job-id="{job_id}"]')
        expect(saved).to_have_class("job done saved")
        assert saved.locator("td").all_text_contents()[5:7] == ["1.0000", judged]
        expect(page.locator("#reports-status")).to_contain_text("saved earlier")
        bad = page.locator(f'#reports tbody tr[data-job-id="{name}-broken"]')
        expect(bad).to_have_class("job unreadable saved")
        expect(bad.locator("td").nth(3)).to_contain_text("unreadable: cannot read report")
        expect(bad.locator("a.open-report")).to_have_count(0)
        broken.unlink()
        page.screenshot(path=str(tmp_path / "restarted.png"), full_page=True)
        with page.context.expect_page() as popup:
            saved.locator("a.open-report").click()
        assert judged_at_10(popup.value) == judged
    assert page.problems == []
