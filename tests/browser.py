"""Headless Chromium (Debian's package) driven by Playwright, for page and report tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def chromium_page() -> Iterator[Any]:
    """A fresh page in headless Chromium; skips the test when Chromium is not installed."""
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip("chromium is not installed (make browser installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=ARGS, headless=True)
        try:
            page = browser.new_page()
            yield page
        finally:
            browser.close()


def search(page: Any, text: str | None = None) -> None:
    """Submit the web page's search form (with ``text``, if given) and wait until the page has
    rendered the answer (its ``#results`` counter moved)."""
    from playwright.sync_api import expect

    before = page.get_attribute("#results", "data-seq")
    if text is not None:
        page.fill("#q", text)
    page.click("#go")
    # The page's CSP forbids eval, so wait with a locator assertion, not wait_for_function.
    expect(page.locator("#results")).not_to_have_attribute("data-seq", before, timeout=20_000)
