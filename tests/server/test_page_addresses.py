"""Every view of the page has its own address, opened directly in a real headless Chromium
against the real server: ``/#judge``, ``/#reports``, ``/#history``, a report's own
``/#reports/JOB_ID``; and the search placeholders describe the collection served."""

from __future__ import annotations

import json
import re
import time

from playwright.sync_api import expect

from tests.support import INDEXED

VIEWS = ("search", "judge", "reports", "history")
BENCH = [
    {"query_id": "a", "query": "how does a laser rangefinder measure distance", "relevant": ["lidar"]},
    {"query_id": "b", "query": "why does my heading drift over time", "relevant": ["imu"]},
]  # fmt: skip


def shown(page) -> list[str]:
    return [v for v in VIEWS if page.locator(f"#{v}-view").is_visible()]


def fresh(page, base_url: str, address: str) -> None:
    """Open ``address`` in the tab as a new load (a link followed, a bookmark, a reload)."""
    page.goto("about:blank")
    page.goto(f"{base_url}/{address}")


def test_each_view_opens_from_its_own_address(page, base_url):
    for view in ("judge", "reports", "history"):
        fresh(page, base_url, f"#{view}")
        expect(page.locator(f"#{view}-view")).to_be_visible()
        assert shown(page) == [view]
        assert "active" in (page.get_attribute(f"#show-{view}", "class") or "")
    fresh(page, base_url, "")
    assert shown(page) == ["search"]
    # the tabs write the address, and the back button goes back through the views
    page.click("#show-judge")
    expect(page).to_have_url(f"{base_url}/#judge")
    page.click("#show-history")
    expect(page).to_have_url(f"{base_url}/#history")
    page.go_back()
    expect(page.locator("#judge-view")).to_be_visible()
    assert shown(page) == ["judge"]
    page.click("#show-search")
    expect(page.locator("#search-view")).to_be_visible()
    assert not page.problems and not page.dialogs


def test_a_malformed_address_opens_the_search_view_without_an_error(page, base_url):
    """A bad escape in the address (a hostile or mangled link) threw "URI malformed"."""
    fresh(page, base_url, "#%E0%A4%A")
    expect(page.locator("#search-view")).to_be_visible()
    page.evaluate("() => { location.hash = 'judge/%'; }")
    expect(page.locator("#judge-view")).to_be_visible()
    assert not page.problems and not page.dialogs


def test_a_report_has_its_own_address(page, base_url, api):
    job = api.post("/v1/eval", json={"benchmark": BENCH, "k": [1, 3]}).json()
    deadline = time.monotonic() + 120
    while api.get(f"/v1/eval/{job['job_id']}").json()["status"] not in {"done", "error"}:
        assert time.monotonic() < deadline, "the evaluation job did not finish"
        time.sleep(0.2)
    fresh(page, base_url, f"#reports/{job['job_id']}")
    row = page.locator(f"#report-{job['job_id']}")
    expect(row).to_have_class("job done selected", timeout=20_000)
    assert page.locator("#reports tr.selected").count() == 1
    address = row.locator("a.report-address")
    assert address.get_attribute("href") == f"#reports/{job['job_id']}"
    fresh(page, base_url, "#reports/no-such-job")
    expect(page.locator("#reports-status")).to_contain_text("No report no-such-job")
    assert not page.problems


def test_the_placeholders_describe_the_collection_served(page, base_url, docs_count):
    q = page.locator("#q")
    expect(q).to_have_attribute("placeholder", f"Ask docs a question ({docs_count} chunks)")
    # the keyword indexes of the served collection (tests/support.py INDEXED), not the sample's
    filters = page.locator("#filters")
    expect(filters).to_have_attribute("placeholder", re.compile(r"=VALUE; "))
    pairs, example = (filters.get_attribute("placeholder") or "").split("  or  ")
    named = [p.split("=")[0] for p in pairs.split("; ")]
    assert len(named) == 2 and set(named) <= set(INDEXED)
    assert json.loads(example) == {named[0]: ["A", "B"]}
    assert "lidar" not in (q.get_attribute("placeholder") or "").lower()
