"""The web page's History view in a real headless Chromium against a real server: the trend
plot of the story's runs (one line per benchmark, opened by its address), the changed runs
marked, and two clicked runs diffed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ragsonde.config import Settings
from ragsonde.embedders.onnx import OnnxEmbedder
from ragsonde.retriever import Retriever
from ragsonde.server import create_app
from ragsonde.store import open_store
from tests.browser import chromium_page
from tests.history.support import Story
from tests.history.test_estimates import SCHEMA1
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


def test_history_view_draws_an_estimated_runs_interval(embedder: OnnxEmbedder, tmp_path: Path):
    """The schema-1 file of ``test_estimates`` (migrated on open) and run 2 recorded again as
    run 3: each estimated run's point has the interval's bar, the band joins them, and the diff
    of the two gives the PPI++ difference with what it rests on."""
    from playwright.sync_api import expect

    from ragsonde.history import HistoryStore

    home = tmp_path / "home"
    home.mkdir()
    shutil.copy(SCHEMA1, home / "history.sqlite")
    with HistoryStore(home / "history.sqlite") as hs:
        e = (hs.summary(2).metrics_ci or {})["ndcg@10"]
        again = hs.get(2)
        hs.record(again.report, again.fingerprint, hs.bands(2))
    settings = Settings(home=home, collection="robotics")
    store = open_store(settings)
    try:
        retriever = Retriever(settings, store=store, embedder=embedder)
        with run_server(create_app(settings, retriever)) as url, chromium_page() as page:
            problems: list[str] = []
            page.on("pageerror", lambda err: problems.append(str(err)))
            page.goto(f"{url}/#history")
            expect(page.locator("#history-svg circle.run")).to_have_count(3, timeout=20_000)
            bars = page.locator("#history-svg line.interval")
            expect(bars).to_have_count(2)  # run 1 was not estimated: no bar
            assert [b.get_attribute("data-run") for b in bars.all()] == ["2", "3"]
            expect(page.locator("#history-svg polygon.estimate-band")).to_have_count(1)
            bar = bars.first
            title = bar.locator("title").text_content() or ""
            assert f"[{e.low:.4f}, {e.high:.4f}] (cross-ppi++, 20 labelled + 26 predicted)" in title
            dot = page.locator('#history-svg circle[data-run="2"] title').text_content() or ""
            assert f"estimate {e.estimate:.4f}" in dot
            # the bar spans the interval on the plot's own scale: low below high on the page
            y1, y2 = (float(bar.get_attribute(a) or "nan") for a in ("y1", "y2"))
            assert y1 > y2
            page.locator('circle[data-run="2"]').click()
            page.locator('circle[data-run="3"]').click()
            ppi = page.locator("#history-diff p.history-ppi")
            expect(ppi).to_have_count(4, timeout=30_000)  # ndcg, recall, mrr, hit_rate @10
            assert "n.s.: the interval holds 0; rests on 20 labelled queries, 26 predicted" in (
                ppi.first.text_content() or ""
            )  # the same run twice: never significant
            assert problems == []
    finally:
        store.close()
