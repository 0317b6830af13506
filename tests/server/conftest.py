"""A real ragsonde server on a loopback port, over a real Edge store and the real model.

The servers run with :func:`tests.support.run_server` (uvicorn in a background thread on
127.0.0.1:0); tests talk to them with httpx, as a client would, and drive the page in a real
headless Chromium.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from ragsonde.config import Settings
from ragsonde.models.points import PointRecord
from ragsonde.retriever import Retriever
from ragsonde.server import create_app
from ragsonde.store import open_store
from tests.support import DOCS, EVIL, EVIL_TEXT, MAX_BODY, fill, run_server


@pytest.fixture(scope="session")
def server_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    home = tmp_path_factory.mktemp("server") / "home"
    return Settings(home=home, collection="docs", max_body_bytes=MAX_BODY)


@pytest.fixture(scope="session")
def filled_store(server_settings, embedder) -> Iterator[object]:
    """The robotics docs plus the XSS chunk in ``docs``; an 8-dimensional ``small`` collection."""
    store = open_store(server_settings)
    fill(store, embedder)
    vec = embedder.embed_documents([EVIL_TEXT])[0].tolist()
    store.upsert("docs", [PointRecord(id=EVIL.id, vector=vec, payload=EVIL.payload)])
    store.create_collection("small", 8)
    yield store
    store.close()


@pytest.fixture(scope="session")
def retriever(server_settings, filled_store, embedder) -> Retriever:
    return Retriever(server_settings, store=filled_store, embedder=embedder)


@pytest.fixture(scope="session")
def base_url(server_settings, retriever) -> Iterator[str]:
    """The main server: no API key."""
    with run_server(create_app(server_settings, retriever)) as url:
        yield url


@pytest.fixture
def api(base_url) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=base_url, timeout=30) as client:
        yield client


@pytest.fixture(scope="session")
def docs_count() -> int:
    return len(DOCS) + 1


# -- a real headless Chromium on the page (test_page, test_eval_api) ---------------------------
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser, base_url):
    context = browser.new_context()
    pg = context.new_page()
    pg.dialogs, pg.problems = [], []
    pg.on("dialog", lambda d: (pg.dialogs.append(d.message), d.dismiss()))
    pg.on("pageerror", lambda e: pg.problems.append(f"page error: {e}"))
    pg.on("console", lambda m: m.type == "error" and pg.problems.append(f"console: {m.text}"))
    pg.goto(f"{base_url}/")
    yield pg
    context.close()
