"""The search view's mode control in a real headless Chromium against the real server: dense,
sparse or hybrid, offered only where the collection answers it, defaulting to the server's
setting, kept in the page's address, and said with the results.

The oracle is the server itself: the chunks the page lists are the ones ``POST /v1/query``
returns for that mode (and not the ones another mode returns).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import expect

from ragsonde.ingest import IngestOptions, ingest_documents, open_source
from ragsonde.models.params import SearchParams
from ragsonde.retriever import Retriever
from ragsonde.samples import robotics_docs
from ragsonde.server import create_app
from tests.browser import search
from tests.support import run_server

pytestmark = pytest.mark.slow  # the real model, a real browser

#: The sample robotics docs with dense and BM25 vectors, in the session's server store.
HYBRID = "robotics-bm25"
#: A question whose keywords BM25 weighs: hybrid and dense rank different chunks for it.
QUESTION = "coulomb counting"


@pytest.fixture(scope="module")
def hybrid_collection(filled_store, embedder) -> str:
    ingest_documents(
        open_source(str(robotics_docs())),
        store=filled_store,
        embedder=embedder,
        collection=HYBRID,
        options=IngestOptions(sparse=True),
    )
    return HYBRID


def shown_ids(page) -> list[str]:
    """The chunk ids of the cards, read from each card's metadata block."""
    return [
        json.loads(t)["chunk_id"] for t in page.locator("#results .metadata").all_text_contents()
    ]


def api_ids(api, mode: str, collection: str = HYBRID, top_k: int = 5) -> list[str]:
    body = {"query": QUESTION, "collection": collection, "mode": mode, "top_k": top_k}
    resp = api.post("/v1/query", json=body).json()
    assert resp["status"] == "success", resp
    return [r["chunk_id"] for r in resp["results"]]


def fresh(page, url: str) -> None:
    """Open ``url`` as a new load (a link followed, a bookmark)."""
    page.goto("about:blank")
    page.goto(url)


def address(page) -> dict[str, list[str]]:
    fragment = urlsplit(page.url).fragment
    assert fragment.startswith("search?"), page.url
    return parse_qs(fragment.removeprefix("search?"))


def test_hybrid_runs_on_a_bm25_collection_and_the_page_says_so(page, api, hybrid_collection):
    dense, hybrid = api_ids(api, "dense"), api_ids(api, "hybrid")
    assert dense != hybrid  # the data tells the modes apart
    page.fill("#collection", hybrid_collection)
    page.locator("#search-view").get_by_label("mode").select_option("hybrid")
    search(page, QUESTION)
    expect(page.locator("#timings")).to_contain_text("hybrid search, dbsf fusion")
    expect(page.locator("#results")).to_have_attribute("data-mode", "hybrid")
    assert shown_ids(page) == hybrid
    # a mode changed with a query typed searches again, with that mode
    before = page.get_attribute("#results", "data-seq")
    page.select_option("#mode", "dense")
    expect(page.locator("#results")).not_to_have_attribute("data-seq", before, timeout=20_000)
    expect(page.locator("#timings")).to_contain_text("dense search")
    assert shown_ids(page) == dense
    assert not page.problems and not page.dialogs


def test_sparse_and_hybrid_show_the_engines_score(page, api, hybrid_collection):
    """similarity_score is clamped to 1: nearly every BM25 hit showed 1.000 and a full bar."""
    body = {"query": QUESTION, "collection": hybrid_collection, "mode": "sparse", "top_k": 5}
    raw = [r["raw_score"] for r in api.post("/v1/query", json=body).json()["results"]]
    assert len(set(raw)) > 1
    page.fill("#collection", hybrid_collection)
    page.select_option("#mode", "sparse")
    search(page, QUESTION)
    expect(page.locator("#timings")).to_contain_text("sparse search")
    assert page.locator("#results .score").all_text_contents() == [f"{s:.3f}" for s in raw]
    widths = page.eval_on_selector_all(
        "#results .bar-fill", "bars => bars.map(b => parseFloat(b.style.width))"
    )
    assert widths[0] == 100.0 and widths == sorted(widths, reverse=True) and widths[-1] < 100


def test_the_mode_survives_a_reload_and_a_shared_link(browser, page, api, hybrid_collection):
    hybrid = api_ids(api, "hybrid", top_k=3)
    page.fill("#collection", hybrid_collection)
    page.select_option("#mode", "hybrid")
    page.fill("#top_k", "3")
    search(page, QUESTION)
    assert address(page) == {
        "q": [QUESTION], "mode": ["hybrid"], "top_k": ["3"], "collection": [hybrid_collection],
    }  # fmt: skip
    link = page.url
    page.reload()
    expect(page.locator("#timings")).to_contain_text("hybrid search", timeout=20_000)
    assert page.input_value("#mode") == "hybrid" and page.input_value("#q") == QUESTION
    assert page.input_value("#collection") == hybrid_collection
    assert shown_ids(page) == hybrid
    # the link in another tab: the same search
    other = browser.new_context().new_page()
    other.goto(link)
    expect(other.locator("#timings")).to_contain_text("hybrid search", timeout=20_000)
    assert other.input_value("#mode") == "hybrid" and shown_ids(other) == hybrid
    other.context.close()
    assert not page.problems


def test_a_collection_without_sparse_vectors_offers_dense_only(page, api, hybrid_collection):
    """``docs`` (the default) and ``small`` have no sparse vector: the server refuses sparse and
    hybrid there, so the page does not offer them and says why."""
    refused = api.post("/v1/query", json={"query": "lidar", "mode": "hybrid"}).json()
    assert refused["error"]["code"] == "VALIDATION_ERROR"  # what choosing it would get
    disabled = "os => os.filter(o => o.disabled).map(o => o.value)"
    expect(page.locator("#mode-note")).to_contain_text("not available on collection docs")
    assert page.eval_on_selector_all("#mode option", disabled) == ["sparse", "hybrid"]
    assert "no sparse (BM25) vectors" in page.text_content("#mode-note")
    # the keyboard cannot reach them either
    page.focus("#mode")
    for _ in range(3):
        page.keyboard.press("ArrowDown")
    assert page.input_value("#mode") in {"", "dense"}
    page.fill("#collection", hybrid_collection)
    assert page.eval_on_selector_all("#mode option", disabled) == []
    expect(page.locator("#mode-note")).to_have_text("")
    page.select_option("#mode", "hybrid")
    page.fill("#collection", "small")
    assert page.eval_on_selector_all("#mode option", disabled) == ["sparse", "hybrid"]
    assert page.input_value("#mode") == ""  # the server's default, dense, instead
    expect(page.locator("#mode-note")).to_contain_text("Searching dense instead of hybrid")
    page.fill("#collection", hybrid_collection)
    assert page.input_value("#mode") == "hybrid"  # the choice comes back where it can run
    assert not page.problems


def test_an_address_asking_a_mode_the_collection_lacks_searches_dense(page, base_url):
    fresh(page, f"{base_url}/#search?q=lidar&mode=hybrid&collection=docs")
    expect(page.locator("#timings")).to_contain_text("dense search", timeout=20_000)
    expect(page.locator("#status")).to_have_text("5 results")
    expect(page.locator("#mode-note")).to_contain_text("Searching dense instead of hybrid")
    assert "mode" not in address(page)  # the address now names the search that ran
    assert not page.problems


@pytest.mark.parametrize(
    "mode",
    [
        "<script>alert(1)</script>",
        "HYBRID",
        "hybrid ",
        "%E0%A4%A",  # a malformed escape
        "constructor",
        "",
    ],
)
def test_a_malformed_mode_in_the_address_is_ignored(page, base_url, mode):
    fresh(page, f"{base_url}/#search?q=lidar&mode={mode}&top_k=-3&threshold=NaN")
    expect(page.locator("#timings")).to_contain_text("dense search", timeout=20_000)
    expect(page.locator("#status")).to_have_text("5 results")
    assert page.input_value("#mode") == "" and page.input_value("#q") == "lidar"
    assert page.input_value("#top_k") == "" and page.input_value("#threshold") == ""
    assert address(page) == {"q": ["lidar"]}
    page.wait_for_timeout(200)
    assert not page.problems and not page.dialogs


# -- a server whose settings search hybrid --------------------------------------------------
@pytest.fixture(scope="module")
def hybrid_default_url(server_settings, filled_store, embedder, hybrid_collection) -> Iterator[str]:
    """A server of its own over the same store: ``search.mode = "hybrid"``, ``top_k = 3``, and
    the BM25 collection as its default."""
    settings = server_settings.model_copy(
        update={"collection": hybrid_collection, "search": SearchParams(mode="hybrid", top_k=3)}
    )
    retriever = Retriever(settings, store=filled_store, embedder=embedder)
    with run_server(create_app(settings, retriever)) as url:
        yield url
    retriever.close()


def test_the_mode_defaults_to_the_servers_setting(browser, hybrid_default_url, api):
    context = browser.new_context()
    page: Any = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(f"{hybrid_default_url}/")
    default = page.locator("#mode option").first
    expect(default).to_have_text("default (hybrid)")
    expect(page.locator("#top_k")).to_have_attribute("placeholder", "3")
    assert page.input_value("#mode") == ""
    search(page, QUESTION)  # nothing chosen: the server's own setting runs
    expect(page.locator("#timings")).to_contain_text("hybrid search")
    assert shown_ids(page) == api_ids(api, "hybrid", top_k=3)
    assert "mode" not in address(page)  # a shared link follows the receiving server's default
    context.close()
    assert problems == []
