"""A docs site: a sitemap (nested sitemap indexes too) or one page, fetched with httpx.

Pages are fetched a bounded number at a time, with timeouts and retries (the one policy of
:mod:`ragsonde.retry`); a page that fails is a
:class:`Failure`, and so is a nested sitemap that cannot be read (its pages are unknown), while a
top sitemap that cannot be fetched at all is an error for the whole run.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from ragsonde.errors import QueryValidationError
from ragsonde.ingest.document import Document, Failure
from ragsonde.ingest.parse import parse
from ragsonde.retry import (
    RetriesExhausted,
    RetryPolicy,
    TryAgain,
    call_with_retries,
    parse_retry_after,
)

if TYPE_CHECKING:
    import httpx

    from ragsonde.ingest.sources import SourceOptions

__all__ = ["WebSource", "parse_sitemap"]

_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
_RETRY_STATUS = {429, 500, 502, 503, 504}
_USER_AGENT = "ragsonde-ingest/0.1 (+https://github.com/ragsonde)"


class _FetchError(Exception):
    pass


def parse_sitemap(xml: bytes) -> tuple[list[str], list[str]]:
    """``(page urls, nested sitemap urls)`` of a sitemap or sitemap index."""
    from defusedxml import ElementTree

    try:
        root = ElementTree.fromstring(xml)
    except Exception as e:  # defusedxml raises ParseError and its own DTD/entity errors
        raise ValueError(f"not a sitemap ({e})") from e
    locs = [(el.text or "").strip() for el in root.iter(f"{_NS}loc")]
    if not locs:  # sitemaps without the namespace
        locs = [(el.text or "").strip() for el in root.iter("loc")]
    locs = [u for u in locs if u]
    is_index = root.tag.endswith("sitemapindex")
    return ([], locs) if is_index else (locs, [])


class WebSource:
    def __init__(self, url: str, options: SourceOptions) -> None:
        self.url = url
        self.opts = options
        self._pages: list[str] | None = None
        #: Nested sitemaps that could not be read: reported as failures, their pages unknown.
        self._lost: list[Failure] = []

    def _client(self) -> httpx.Client:
        import httpx

        return httpx.Client(
            timeout=self.opts.timeout_s,
            follow_redirects=True,
            headers={"User-Agent": _USER_AGENT},
            limits=httpx.Limits(max_connections=self.opts.concurrency),
        )

    def _get(self, client: httpx.Client, url: str) -> httpx.Response:
        """GET ``url``, retried (timeouts, refused connections, 429/5xx) by the one retry policy
        (:mod:`ragsonde.retry`); bounded by ``retries + 1`` attempts of ``timeout_s`` each."""
        import httpx

        def attempt(_remaining: float | None) -> httpx.Response:
            try:
                resp = client.get(url)
            except httpx.TimeoutException as e:
                raise TryAgain(f"timed out after {self.opts.timeout_s:g} s") from e
            except httpx.HTTPError as e:
                raise TryAgain(f"could not connect ({type(e).__name__})") from e
            if resp.status_code in _RETRY_STATUS:
                raise TryAgain(
                    f"HTTP {resp.status_code}",
                    retry_after=parse_retry_after(resp.headers.get("retry-after")),
                )
            if resp.status_code >= 400:
                raise _FetchError(f"HTTP {resp.status_code}")
            return resp

        try:
            return call_with_retries(attempt, RetryPolicy(self.opts.retries, max_wait_s=4.0))
        except RetriesExhausted as e:
            raise _FetchError(e.last.reason) from e

    def _discover(self, client: httpx.Client) -> list[str]:
        if self._pages is not None:
            return self._pages
        try:
            first = self._get(client, self.url)
        except _FetchError as e:
            raise QueryValidationError(
                f"Could not fetch {self.url}: {e}. Check the URL and that the site is reachable.",
                field="source",
            ) from e
        ctype = first.headers.get("content-type", "")
        looks_xml = (
            "xml" in ctype or self.url.endswith(".xml") or first.content.lstrip()[:5] == b"<?xml"
        )
        if not looks_xml:
            self._pages = [self.url]
            return self._pages
        pages: list[str] = []
        queue: list[tuple[str, bytes | None]] = [(self.url, first.content)]
        seen: set[str] = set()
        while queue:
            url, body = queue.pop(0)
            if url in seen:
                continue
            seen.add(url)
            try:
                content = body if body is not None else self._get(client, url).content
                found, nested = parse_sitemap(content)
            except (_FetchError, ValueError) as e:
                if url == self.url:
                    raise QueryValidationError(f"{url} is {e}.", field="source") from e
                # a broken nested sitemap loses its pages, not the run: said as a failure
                self._lost.append(Failure(url, f"sitemap not read, its pages skipped: {e}"))
                continue
            pages.extend(found)
            queue.extend((n, None) for n in nested)
        self._pages = list(dict.fromkeys(pages))[: self.opts.max_pages]
        return self._pages

    def notes(self) -> list[str]:
        return []

    def estimate(self) -> int | None:
        with self._client() as client:
            return len(self._discover(client))

    def __iter__(self) -> Iterator[Document | Failure]:
        with self._client() as client, ThreadPoolExecutor(self.opts.concurrency) as pool:
            pages = self._discover(client)
            yield from self._lost
            window = self.opts.concurrency * 2
            for start in range(0, len(pages), window):
                batch = pages[start : start + window]
                yield from pool.map(lambda u: self._page(client, u), batch)

    def _page(self, client: httpx.Client, url: str) -> Document | Failure:
        try:
            resp = self._get(client, url)
        except _FetchError as e:
            return Failure(url, str(e))
        ctype = resp.headers.get("content-type", "text/html")
        fmt = "html" if "html" in ctype else "markdown" if "markdown" in ctype else "text"
        try:
            text = resp.content.decode(resp.encoding or "utf-8")
        except (UnicodeDecodeError, LookupError) as e:
            return Failure(url, f"undecodable page ({e})")
        parsed = parse(fmt, text)
        doc = Document(
            doc_id=url,
            sections=parsed.sections,
            title=parsed.title,
            url=str(resp.url),
            metadata=dict(parsed.metadata),
            warnings=parsed.warnings,
        )
        return Failure(url, "empty page") if doc.is_empty else doc
