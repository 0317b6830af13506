"""The web page's History view in a real headless Chromium against a real server: the trend
plot of the story's runs, the changed runs marked, and two clicked runs diffed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.retriever import Retriever
from ragsonde.server import create_app
from ragsonde.store import open_store
from tests.browser import chromium_page
from tests.history.support import Story
from tests.support import run_server

pytestmark = pytest.mark.slow  # a browser


def test_history_view_plots_the_trend_and_diffs_two_runs(story: Story, tmp_path: Path):
    from playwright.sync_api import expect

    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(story.history, home / "history.sqlite")  # the server's own history file
    settings = Settings(home=home, collection="robotics")
    store = open_store(settings)
    try:
        retriever = Retriever(settings, store=store, embedder=story.embedder)
        with run_server(create_app(settings, retriever)) as url, chromium_page() as page:
            problems: list[str] = []
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.goto(f"{url}/")
            page.click("#show-history")
            runs = page.locator("#history-svg circle.run")
            expect(runs).to_have_count(len(story.runs), timeout=20_000)
            expect(page.locator("#history-svg polygon.band")).to_have_count(1)
            changed = page.locator("#history-svg circle.changed")
            expect(changed).to_have_count(3)  # hnsw_ef, the re-ingest, the labels
            assert "search.hnsw_ef" in changed.nth(0).locator("title").text_content()
            page.locator(f'circle[data-run="{story.runs["hnsw_ef"]}"]').click()
            page.locator(f'circle[data-run="{story.runs["chunks"]}"]').click()
            diff = page.locator("#history-diff")
            expect(diff.locator("h3")).to_have_text(
                f"run {story.runs['chunks']} vs run {story.runs['hnsw_ef']}", timeout=30_000
            )
            fields = diff.locator(".history-changes li").all_text_contents()
            assert [f.split(":")[0] for f in fields] == [
                "content.sample_sha256", "content.sampled", "index.points_count",
            ]  # fmt: skip
            assert diff.locator(".history-metrics tr").count() == 5  # header + 4 metrics
            assert diff.locator(".history-flips li").count() >= 1
            # the label change: refused as a like-for-like comparison, on the page too
            page.locator(f'circle[data-run="{story.runs["labels"]}"]').click()
            page.locator(f'circle[data-run="{story.runs["chunks"]}"]').click()
            expect(diff.locator("p.error")).to_contain_text("different benchmarks")
            assert problems == []
    finally:
        store.close()
