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


def test_keys_typed_faster_than_the_server_answers_grade_hit_after_hit(page, server_settings):
    """Each key grades the next hit at once; the grades shown are the ones in the file.

    The page used to move on only once a grade was saved, and sent grades concurrently: keys
    typed quickly regraded one hit, and the page showed a grade the file did not hold."""
    name = f"fast-{uuid.uuid4().hex[:8]}"
    page.click("#show-judge")
    page.fill("#judge-benchmark", name)
    page.fill("#judge-name", "quick")
    page.fill("#judge-query", QUERY)
    pool(page)
    typed = "3210321"
    page.keyboard.type(typed)  # no delay: every key before the first save is answered
    expect(page.locator("#hits")).to_have_attribute("data-saved", str(len(typed)))
    expect(page.locator("#hits .hit[data-pending]")).to_have_count(0)
    order = page.eval_on_selector_all("#hits .hit", "hs => hs.map(h => h.dataset.chunkId)")
    shown = page.eval_on_selector_all(
        "#hits .hit[data-grade]", "hs => hs.map(h => [h.dataset.chunkId, h.dataset.grade])"
    )
    assert [c for c, _ in shown] == order[: len(typed)]
    assert [int(g) for _, g in shown] == [int(k) for k in typed]
    path = server_settings.home / "benchmarks" / f"{name}.jsonl"
    (row,) = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert {lab["chunk_id"]: lab["grade"] for lab in row["labels"]} == {c: int(g) for c, g in shown}
    assert page.problems == []


def test_an_empty_pool_and_a_lost_grade_are_said(page, server_settings, filled_store, embedder):
    """An empty collection said "0 of 0 hits judged"; a grade the server refused left no mark on
    its hit once the selection had moved on."""
    empty = f"empty-{uuid.uuid4().hex[:8]}"
    filled_store.create_collection(empty, embedder.dimension)
    page.click("#show-judge")
    page.fill("#judge-benchmark", f"none-{uuid.uuid4().hex[:8]}")
    page.fill("#judge-collection", empty)
    page.fill("#judge-query", QUERY)
    pool(page)
    expect(page.locator("#judge-status")).to_have_text(
        f"Nothing to judge: collection {empty} returned no hit for this query."
    )

    name = f"lost-{uuid.uuid4().hex[:8]}"
    page.fill("#judge-benchmark", name)
    page.fill("#judge-collection", "")
    pool(page)
    unreadable = server_settings.home / "benchmarks" / f"{name}.jsonl"
    unreadable.mkdir(parents=True)  # a folder where the file goes: the next grade fails
    page.locator("#hits .hit").first.focus()
    page.keyboard.press("2")
    first = page.locator("#hits .hit").first
    expect(first).to_have_attribute("data-unsaved", "2")
    expect(page.locator("#judge-status")).to_contain_text("Not saved: grade 2 of hit #1: ")
    assert first.get_attribute("data-grade") is None
    unreadable.rmdir()


def test_another_benchmark_named_shows_and_takes_its_own_grades(page, server_settings):
    """Naming another benchmark after pooling kept the first one's grades on the hits shown,
    while the next grade went to the benchmark named."""
    first, second = (f"{n}-{uuid.uuid4().hex[:8]}" for n in ("one", "two"))
    page.click("#show-judge")
    page.fill("#judge-benchmark", first)
    page.fill("#judge-query", QUERY)
    pool(page)
    hit = page.locator("#hits .hit").first
    hit.focus()
    page.keyboard.press("3")
    expect(hit).to_have_attribute("data-grade", "3")

    before = page.get_attribute("#hits", "data-seq")
    page.fill("#judge-benchmark", second)
    page.locator("#judge-benchmark").blur()  # as a person leaves the field: "change"
    expect(page.locator("#hits")).not_to_have_attribute("data-seq", before)
    hit = page.locator("#hits .hit").first
    expect(hit).not_to_have_attribute("data-grade", "3")  # the second has no grade yet
    hit.focus()
    page.keyboard.press("1")
    expect(hit).to_have_attribute("data-grade", "1")
    chunk = hit.get_attribute("data-chunk-id")

    def grades(name: str) -> dict[str, int]:
        path = server_settings.home / "benchmarks" / f"{name}.jsonl"
        (row,) = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return {lab["chunk_id"]: lab["grade"] for lab in row["labels"]}

    assert grades(first) == {chunk: 3} and grades(second) == {chunk: 1}
    assert page.problems == []
