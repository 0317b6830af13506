"""The page's Traffic view in a real headless Chromium against the real server."""

from __future__ import annotations

import json

from playwright.sync_api import expect

OFF_TOPIC = "who won the football world cup in 1998?"
EVIL_QUERY = "<img src=x onerror=alert(1)> recipe for banana bread"


def test_traffic_view_shows_the_weakest_queries_as_text(page) -> None:
    rows = [
        {"query": "how does lidar measure distance?"},
        {"query": "what makes a gyroscope drift?"},
        {"query": OFF_TOPIC},
        {"query": EVIL_QUERY},
    ]
    page.click("#show-traffic")
    page.fill("#traffic-rows", "\n".join(json.dumps(r) for r in rows))
    page.click("#traffic-go")
    expect(page.locator("#traffic-status")).to_have_text("Done.", timeout=60_000)
    expect(page.locator("#traffic-summary")).to_contain_text("4 distinct queries (4 asked)")
    weakest = page.locator("#traffic-weakest tr")
    expect(weakest).to_have_count(4)
    texts = weakest.locator("td:first-child").all_inner_texts()
    assert OFF_TOPIC in texts and EVIL_QUERY in texts  # shown as text, never run
    assert page.locator("#traffic-weakest tr.weak").count() >= 1
    assert page.dialogs == [] and page.problems == []


def test_traffic_view_shows_errors(page) -> None:
    page.click("#show-traffic")
    page.fill("#traffic-rows", "not json")
    page.click("#traffic-go")
    expect(page.locator("#traffic-status")).to_have_text("line 1 is not JSON")
    page.fill("#traffic-rows", json.dumps({"session": "s"}))
    page.click("#traffic-go")
    expect(page.locator("#traffic-status")).to_contain_text("VALIDATION_ERROR")


def test_rows_not_read_are_counted_and_an_error_clears_the_last_answer(page) -> None:
    """Six lines sent, three read: the summary said "3 distinct queries" and nothing of the rest;
    an error then showed under the previous answer's figures."""
    rows = [
        {"query": "how does lidar measure distance?"},
        {"query": 5},
        {"nothing": "here"},
        {"query": "what makes a gyroscope drift?"},
    ]
    page.click("#show-traffic")
    page.fill("#traffic-rows", "\n".join(json.dumps(r) for r in rows))
    page.click("#traffic-go")
    expect(page.locator("#traffic-status")).to_have_text("Done.", timeout=60_000)
    expect(page.locator("#traffic-summary")).to_contain_text(
        "2 rows not read (first: records[1]: the query must be text, not int)"
    )
    expect(page.locator("#traffic-weakest tr")).to_have_count(2)
    page.fill("#traffic-rows", "not json")
    page.click("#traffic-go")
    expect(page.locator("#traffic-status")).to_have_text("line 1 is not JSON")
    expect(page.locator("#traffic-summary")).to_have_text("")
    expect(page.locator("#traffic-weakest tr")).to_have_count(0)
    assert page.problems == []
