"""Sources: a real docs site on loopback (sitemap index → sitemap → pages), BEIR, JSON Lines."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from ragsonde.errors import QueryValidationError
from ragsonde.ingest import Document, Failure, SourceOptions, detect_format, open_source

PAGE = """<html><head><title>{title}</title></head><body><nav>Menu</nav>
<main><h1>{title}</h1><h2>Setup</h2><p>{body}</p></main><footer>(c)</footer></body></html>"""


class _Site(BaseHTTPRequestHandler):
    routes: ClassVar[dict[str, tuple[int, str, str]]] = {}

    def do_GET(self):
        status, ctype, body = self.routes.get(self.path, (404, "text/html", "<h1>Not found</h1>"))
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    xml = "application/xml"
    _Site.routes = {
        "/sitemap.xml": (
            200,
            xml,
            '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            f"<sitemap><loc>{base}/docs-sitemap.xml</loc></sitemap></sitemapindex>",
        ),
        "/docs-sitemap.xml": (
            200,
            xml,
            '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
            + "".join(
                f"<url><loc>{base}/{p}</loc></url>" for p in ("lidar", "imu", "gone", "empty")
            )
            + "</urlset>",
        ),
        "/lidar": (
            200,
            "text/html; charset=utf-8",
            PAGE.format(title="Lidar", body="Laser pulses."),
        ),
        "/imu": (200, "text/html", PAGE.format(title="IMU", body="Gyroscope bias drifts.")),
        "/empty": (200, "text/html", "<html><body><nav>only nav</nav></body></html>"),
    }
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield base
    server.shutdown()
    server.server_close()


def test_sitemap_index_pages_and_failures(site):
    items = list(open_source(f"{site}/sitemap.xml", options=SourceOptions(retries=0)))
    docs = {d.doc_id: d for d in items if isinstance(d, Document)}
    failures = {f.source: f.reason for f in items if isinstance(f, Failure)}
    assert set(docs) == {f"{site}/lidar", f"{site}/imu"}
    lidar = docs[f"{site}/lidar"]
    assert lidar.title == "Lidar" and lidar.url == f"{site}/lidar"
    assert [s.name for s in lidar.sections] == ["Lidar > Setup"]
    assert "Menu" not in lidar.sections[0].text
    assert failures == {f"{site}/gone": "HTTP 404", f"{site}/empty": "empty page"}


def test_a_single_page_url(site):
    items = list(open_source(f"{site}/imu"))
    assert len(items) == 1 and isinstance(items[0], Document)
    assert "Gyroscope" in items[0].sections[0].text


def test_an_unreachable_sitemap_is_an_error(site):
    source = open_source(f"{site}/missing-sitemap.xml", options=SourceOptions(retries=0))
    with pytest.raises(QueryValidationError, match="Could not fetch"):
        list(source)
    closed = open_source("http://127.0.0.1:9/sitemap.xml", options=SourceOptions(retries=0))
    with pytest.raises(QueryValidationError, match="Could not fetch"):
        list(closed)


def test_beir_corpus_slice(scifact_dir, tmp_path):
    lines = (scifact_dir / "corpus.jsonl").read_text().splitlines()[:20]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(lines) + "\n")
    assert detect_format(str(tmp_path)) == "beir"
    docs = list(open_source(str(tmp_path)))
    assert len(docs) == 20 and all(isinstance(d, Document) for d in docs)
    first = json.loads(lines[0])
    d0 = docs[0]
    assert isinstance(d0, Document)
    assert d0.doc_id == first["_id"]
    assert d0.sections[0].text == f"{first['title']} {first['text']}".strip()
    assert d0.embed_title is False


def test_jsonl_extra_fields_go_to_metadata(tmp_path):
    path = tmp_path / "docs.jsonl"
    path.write_text(
        '{"id": "a", "text": "Alpha.", "title": "A", "url": "https://x/a", "team": "nav"}\n'
        "not json\n"
        '{"id": "b"}\n'
    )
    assert detect_format(str(path)) == "jsonl"
    items = list(open_source(str(path)))
    doc = items[0]
    assert (
        isinstance(doc, Document) and doc.metadata == {"team": "nav"} and doc.url == "https://x/a"
    )
    assert [type(i).__name__ for i in items[1:]] == ["Failure", "Failure"]


def test_a_broken_nested_sitemap_is_reported_not_dropped(site):
    xml = "application/xml"
    index = (
        '<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(
            f"<sitemap><loc>{site}/{name}</loc></sitemap>"
            for name in ("docs-sitemap.xml", "cut-sitemap.xml", "gone-sitemap.xml")
        )
        + "</sitemapindex>"
    )
    extra = {
        "/partly.xml": (200, xml, index),
        "/cut-sitemap.xml": (200, xml, f'<?xml version="1.0"?><urlset><url><loc>{site}/im'),
    }
    _Site.routes.update(extra)
    try:
        items = list(open_source(f"{site}/partly.xml", options=SourceOptions(retries=0)))
    finally:
        for key in extra:
            del _Site.routes[key]
    docs = {d.doc_id for d in items if isinstance(d, Document)}
    failures = {f.source: f.reason for f in items if isinstance(f, Failure)}
    assert docs == {f"{site}/lidar", f"{site}/imu"}  # the sound nested sitemap's pages
    cut, gone = failures[f"{site}/cut-sitemap.xml"], failures[f"{site}/gone-sitemap.xml"]
    assert cut.startswith("sitemap not read") and gone.endswith("HTTP 404")
