"""The search page in a real headless Chromium against the real server."""

from __future__ import annotations

import math
import uuid

from playwright.sync_api import expect

from tests.browser import search
from tests.support import EVIL, EVIL_TEXT


def scores(page) -> list[float]:
    return [
        float(s)
        for s in page.eval_on_selector_all("#results .card", "cs => cs.map(c => c.dataset.score)")
    ]


def test_search_threshold_and_untrusted_text(page, tmp_path, docs_count):
    page.fill("#top_k", str(docs_count))
    search(page, "how does a laser rangefinder measure distance")
    cards = page.locator("#results .card")
    assert cards.count() == docs_count
    first = cards.nth(0)
    assert first.locator(".rank").text_content() == "#1"  # people count from 1
    assert first.locator(".title").text_content() == "LIDAR"
    assert first.locator(".title").get_attribute("href") == "https://docs.example/lidar"
    assert first.locator(".section").text_content() == "Sensors > Lidar"
    assert "laser pulses" in first.locator(".text").text_content()
    all_scores = scores(page)
    assert all_scores == sorted(all_scores, reverse=True)
    assert [cards.nth(i).locator(".rank").text_content() for i in range(3)] == ["#1", "#2", "#3"]
    width = first.locator(".bar-fill").evaluate("e => e.style.width")
    assert width == f"{all_scores[0] * 100:.1f}%"
    timings = page.text_content("#timings")
    assert "embed" in timings and "search" in timings and "total" in timings
    page.screenshot(path=str(tmp_path / "search.png"), full_page=True)

    cut = math.floor(all_scores[2] * 1000) / 1000
    page.fill("#threshold", str(cut))
    search(page)
    kept = scores(page)
    assert 1 <= len(kept) < docs_count and all(s >= cut for s in kept)

    page.fill("#threshold", "0")
    search(page, "img src onerror alert")
    evil = page.locator("#results .card", has_text=EVIL_TEXT)
    assert evil.count() == 1
    assert evil.locator(".text").text_content() == EVIL_TEXT
    assert evil.locator(".title").text_content() == EVIL.payload["title"]
    assert evil.locator(".section").text_content() == EVIL.payload["section"]
    assert evil.locator(".title").get_attribute("href") is None  # javascript: is never a link
    assert evil.locator(".url").text_content() == "javascript:alert(2)"
    assert page.locator("#results img, #results script, #results b").count() == 0
    page.wait_for_timeout(300)  # give a smuggled handler the chance to fire
    assert page.dialogs == []
    shot = tmp_path / "untrusted.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 0
    assert page.problems == []


def test_errors_are_shown_as_text(page):
    page.fill("#collection", "<i>nope</i>")
    search(page, "lidar")
    status = page.text_content("#status")
    assert status.startswith("VALIDATION_ERROR: ") and "'<i>nope</i>'" in status
    assert page.locator("#status i").count() == 0
    assert page.locator("#results .card").count() == 0
    page.fill("#collection", "")
    page.fill("#filters", "section")
    page.click("#go")
    assert "FIELD=VALUE" in page.text_content("#status")
    page.fill("#filters", "section=Sensors > GPS; section=Power > Batteries")
    search(page, "sensor")
    sections = page.locator("#results .card .section").all_text_contents()
    assert sorted(sections) == ["Power > Batteries", "Sensors > GPS"]
    assert page.dialogs == []


def test_nothing_found_says_why_and_a_form_error_clears_the_old_answer(
    page, filled_store, embedder
):
    """The answer "No results above the threshold" came at threshold 0 too, for an empty collection;
    a form the page could not send left the last answer's cards under the error."""
    search(page, "lidar")
    assert page.locator("#results .card").count() > 0
    page.fill("#filters", "{not json")
    page.click("#go")
    expect(page.locator("#status")).to_contain_text("filters: not JSON")
    expect(page.locator("#results .card")).to_have_count(0)
    expect(page.locator("#timings")).to_have_text("")
    expect(page.locator("#go")).to_be_enabled()

    page.fill("#filters", "doc_id=no-such-doc")
    search(page, "lidar")
    expect(page.locator("#status")).to_have_text("No results match the filters.")
    page.fill("#filters", "")
    page.fill("#threshold", "0.999")
    search(page)
    expect(page.locator("#status")).to_have_text("No results at or above the threshold 0.999.")

    empty = f"empty-{uuid.uuid4().hex[:8]}"
    filled_store.create_collection(empty, embedder.dimension)
    page.reload()  # the collections list, with the new one
    page.fill("#threshold", "0")
    page.fill("#collection", empty)
    search(page, "lidar")
    expect(page.locator("#status")).to_have_text(f"No results: collection {empty} holds no chunk.")
    assert page.problems == []


def test_one_column_layout(page):
    """Tabs, every view and the reports table sit in the page's centred column."""
    page.set_viewport_size({"width": 1600, "height": 900})
    column = page.locator(".page").bounding_box()
    assert column["width"] <= 960 and column["x"] > 200
    for view in ("search", "judge", "reports"):
        page.click(f"#show-{view}")
        for selector in (".views", f"#{view}-view"):
            box = page.locator(selector).bounding_box()
            assert (
                box["x"] >= column["x"] and box["x"] + box["width"] <= column["x"] + column["width"]
            )
    table = page.locator("#reports").bounding_box()
    assert table["width"] <= column["width"]
    assert page.problems == []


def test_interactive_docs_render_offline(browser, base_url, tmp_path):
    """/docs is Swagger UI from bundled files: no request leaves the loopback, and it renders
    the operations of the OpenAPI 3.1 document."""
    context = browser.new_context()
    pg = context.new_page()
    outside: list[str] = []
    pg.on(
        "request",
        lambda r: None if r.url.startswith(base_url) else outside.append(r.url),
    )
    pg.goto(f"{base_url}/docs")
    expect(pg.locator(".opblock-summary-path", has_text="/v1/query/batch")).to_be_visible(
        timeout=20_000
    )
    pg.screenshot(path=str(tmp_path / "docs.png"))
    context.close()
    assert outside == []
