"""Judging in a real Chromium: from an empty benchmark to an evaluated one, in the page alone."""

from __future__ import annotations

import json
import uuid

import pytest
from playwright.sync_api import expect

from ragsonde.evaluate import EvalOptions, evaluate

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
    report = evaluate(
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
    cells = row_node.locator("td").all_text_contents()
    assert cells[5] == "1.0000"  # nDCG@10
    expect(row_node.locator("a.open-report")).to_have_count(1)
    page.screenshot(path=str(tmp_path / "reports.png"), full_page=True)
    assert page.problems == []
