"""Odd and hostile text in the search view, in a real headless Chromium against the real
server: a query far past the limit, a lone surrogate, HTML in a link's fields, filter fields
named like JavaScript's object properties, integers past 2**53, and collections with nothing
in them."""

from __future__ import annotations

import uuid
from urllib.parse import quote

import pytest
from playwright.sync_api import expect

from ragsonde.models.points import PointRecord
from tests.browser import search

pytestmark = pytest.mark.slow  # the real model, a real browser

TWO_53 = 2**53  # 9007199254740992: the first integer after it a JS number cannot hold


def page_errors(page) -> list[str]:
    """Uncaught errors (a refused request is also a console line: "Failed to load resource")."""
    return [p for p in page.problems if p.startswith("page error")]


def set_query(page, js_text: str) -> None:
    """Put text in the search box as a script (or a paste) can: ``js_text`` is a JS literal."""
    page.evaluate(f"() => {{ document.getElementById('q').value = {js_text}; }}")


def test_a_query_past_the_limit_is_refused_not_cut(page, base_url):
    """maxlength=2000 cut a pasted 100,000 characters to their first 2000 without a word, and
    the page showed results for a question nobody asked."""
    page.fill("#q", "lidar " * 20_000)
    assert len(page.input_value("#q")) == 120_000
    search(page)
    status = page.text_content("#status")
    assert "too large" in status or "at most 2000 characters" in status, status
    expect(page.locator("#results .card")).to_have_count(0)
    search(page, "x" * 2001)  # under the body limit: the server's own rule, with the count
    expect(page.locator("#status")).to_contain_text("must be at most 2000 characters (got 2001)")
    expect(page.locator("#results .card")).to_have_count(0)
    assert page.url == f"{base_url}/"  # a refused search is not written into the address


def test_a_lone_surrogate_is_refused_and_not_kept_in_the_address(page, base_url):
    search(page, "lidar")
    kept = page.url
    assert kept == f"{base_url}/#search?q=lidar"
    set_query(page, "'lidar \\ud800 pulses'")
    search(page)
    expect(page.locator("#status")).to_contain_text("lone surrogate (U+D800)")
    expect(page.locator("#results .card")).to_have_count(0)
    # the address still names the search that was answered: UTF-8 has no lone surrogate, so it
    # would have come back as another question ("lidar \ufffd pulses")
    assert page.url == kept
    page.reload()
    expect(page.locator("#status")).to_have_text("5 results", timeout=20_000)
    assert page.input_value("#q") == "lidar"
    # the same bytes typed into an address (%ED%A0%80 is no UTF-8): replacement characters,
    # searched as text, no error thrown
    page.goto("about:blank")
    page.goto(f"{base_url}/#search?q=lidar%ED%A0%80")
    expect(page.locator("#status")).to_have_text("5 results", timeout=20_000)
    assert page.input_value("#q").startswith("lidar\ufffd")
    assert page_errors(page) == []


def test_html_in_the_address_and_the_query_stays_text(page, base_url):
    query = "<img src=x onerror=alert(1)><script>alert(2)</script>"
    fields = {"q": query, "collection": "<b>x</b>", "filters": "<i>f</i>=<s>v</s>"}
    link = "&".join(f"{k}={quote(v, safe='')}" for k, v in fields.items())
    page.goto("about:blank")
    page.goto(f"{base_url}/#search?{link}")
    expect(page.locator("#status")).to_contain_text("VALIDATION_ERROR", timeout=20_000)
    for field, value in fields.items():
        assert page.input_value(f"#{field}") == value
    assert "'<b>x</b>'" in page.text_content("#status")
    # the query with a real collection: answered, and its address opens it as the same text
    page.fill("#collection", "")
    page.fill("#filters", "")
    search(page)
    expect(page.locator("#status")).to_have_text("5 results")
    page.reload()
    expect(page.locator("#status")).to_have_text("5 results", timeout=20_000)
    assert page.input_value("#q") == query
    assert page.locator("img, script:not([src]), #search-view b, #search-view i").count() == 0
    page.wait_for_timeout(300)  # give a smuggled handler the chance to fire
    assert page.dialogs == [] and page_errors(page) == []


@pytest.mark.parametrize("field", ["__proto__", "constructor", "toString"])
def test_a_filter_field_named_like_an_object_property_is_sent(page, field):
    """``__proto__=1`` set the filter object's prototype, so no filter was sent and every
    chunk came back; ``constructor=2`` was sent as ``[null, 2]``."""
    page.fill("#filters", f"{field}=1")
    search(page, "lidar")
    expect(page.locator("#status")).to_contain_text(f"Cannot filter on '{field}'")
    expect(page.locator("#results .card")).to_have_count(0)


@pytest.fixture(scope="module")
def big_ids(filled_store, embedder) -> str:
    """Two chunks whose integer field ``n`` differs only past 2**53."""
    name = f"bigint-{uuid.uuid4().hex[:8]}"
    filled_store.create_collection(name, embedder.dimension)
    vecs = embedder.embed_documents(["lidar pulses", "lidar beams"])
    filled_store.upsert(
        name,
        [
            PointRecord(id=str(i + 1), vector=vecs[i].tolist(), payload={"text": t, "n": n})
            for i, (t, n) in enumerate([("rounded", TWO_53), ("exact", TWO_53 + 1)])
        ],
    )
    return name


@pytest.mark.parametrize("filters", [f"n={TWO_53 + 1}", f'{{"n": {TWO_53 + 1}}}'])
def test_an_integer_past_2_53_filters_exactly(page, big_ids, filters):
    """9007199254740993 was sent as 9007199254740992 and found the other chunk."""
    page.fill("#collection", big_ids)
    page.fill("#filters", filters)
    search(page, "lidar")
    expect(page.locator("#status")).to_have_text("1 result")
    assert page.locator("#results .text").all_text_contents() == ["exact"]


def test_empty_collections(page, filled_store, embedder):
    """One made after the page opened is read when its name is typed (it said "No results.",
    not why); one with BM25 vectors offers hybrid and says it holds nothing."""
    plain, bm25 = (f"empty-{uuid.uuid4().hex[:8]}" for _ in range(2))
    filled_store.create_collection(plain, embedder.dimension)
    filled_store.create_collection(bm25, embedder.dimension, sparse_vector_name="bm25")
    page.fill("#collection", plain)
    search(page, "lidar")  # clicking Search leaves the field: the list is read again
    expect(page.locator("#status")).to_have_text(f"No results: collection {plain} holds no chunk.")
    expect(page.locator("#mode-note")).to_contain_text(f"not available on collection {plain}")
    page.fill("#collection", bm25)
    page.locator("#collection").blur()
    expect(page.locator("#mode option[value=hybrid]")).to_be_enabled()
    page.select_option("#mode", "hybrid")
    expect(page.locator("#timings")).to_contain_text("hybrid search", timeout=20_000)
    expect(page.locator("#status")).to_have_text(f"No results: collection {bm25} holds no chunk.")
    expect(page.locator("#mode-note")).to_have_text("")  # read: it answers every mode
    assert not page.problems


def test_a_judge_query_past_the_limit_is_refused_not_cut(page):
    """The Judge view's query box cut a pasted question at 2000 characters too, and pooled hits
    for the cut one."""
    page.click("#show-judge")
    page.fill("#judge-benchmark", f"hostile-{uuid.uuid4().hex[:8]}")
    page.fill("#judge-query", "lidar " * 400)
    assert len(page.input_value("#judge-query")) == 2400
    before = page.get_attribute("#hits", "data-seq")
    page.click("#judge-go")
    expect(page.locator("#hits")).not_to_have_attribute("data-seq", before, timeout=20_000)
    expect(page.locator("#judge-status")).to_contain_text("at most 2000 characters")
    expect(page.locator("#hits .hit")).to_have_count(0)
