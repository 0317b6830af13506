"""The web page's History view in a real headless Chromium against a real server: the trend
plot of the story's runs (one line per benchmark, opened by its address), the changed runs
marked, and two clicked runs diffed."""

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
            page.goto(f"{url}/#history")  # the view's own address
            runs = page.locator("#history-svg circle.run")
            expect(runs).to_have_count(len(story.runs), timeout=20_000)
            # the relabelled benchmark (same name, other content) is a line of its own
            expect(page.locator("#history-svg polygon.band")).to_have_count(2)
            expect(page.locator("#history-svg polyline.line")).to_have_count(2)
            legend = page.locator("#history-svg g.legend text").all_text_contents()
            assert len(legend) == 2 and all(t.startswith("benchmark ") for t in legend)
            assert sorted(t.rsplit("(", 1)[1] for t in legend) == ["1 run)", "3 runs)"]
            assert page.locator("#history-svg g.legend polyline.sparkline").count() == 2
            # the legend sits right of every line, never over one
            right = max(
                b["x"] + b["width"]
                for b in (ln.bounding_box() for ln in page.locator("polyline.line").all())
                if b
            )
            assert all(
                (b := item.bounding_box()) is not None and b["x"] > right
                for item in page.locator("#history-svg g.legend").all()
            )
            changed = page.locator("#history-svg circle.changed")
            expect(changed).to_have_count(2)  # hnsw_ef, the re-ingest (each against its line)
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
