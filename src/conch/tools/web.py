"""The web tools: ``web_fetch`` (a page as readable text) and, when a search backend is
configured, ``web_search``.

Searching goes through ``SearchBackend``, a protocol with one method; ``SearxngSearch`` is
an implementation for any SearXNG-style JSON endpoint (``GET URL?q=...&format=json``).
HTTP goes through ``httpx``, imported only when a request is made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Protocol

from pydantic import Field

from conch.tools import caps
from conch.tools.tool import Tool, make_tool

if TYPE_CHECKING:
    import httpx

ClientFactory = Callable[[], "httpx.Client"]
TIMEOUT_SECONDS = 15.0
MAX_REDIRECTS = 5
_TEXTUAL = ("text/", "json", "xml", "javascript", "x-yaml", "yaml", "markdown")


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result."""

    title: str
    url: str
    snippet: str = ""


class SearchBackend(Protocol):
    """Where ``web_search`` sends queries."""

    def search(self, query: str, limit: int) -> list[SearchHit]:
        """At most ``limit`` results for ``query``; raises with a one-line message on failure."""
        ...


def default_client() -> httpx.Client:
    """An HTTP client with conch's timeout, redirect limit and user agent."""
    import httpx

    return httpx.Client(
        timeout=TIMEOUT_SECONDS,
        follow_redirects=True,
        max_redirects=MAX_REDIRECTS,
        headers={"User-Agent": "conch (+https://pypi.org/project/conch/)"},
    )


class SearxngSearch:
    """A SearXNG-style JSON search endpoint, such as ``http://localhost:8888/search``.

    It is asked ``GET url?q=QUERY&format=json`` and answers ``{"results": [{"title", "url",
    "content"}, ...]}``."""

    def __init__(self, url: str, client_factory: ClientFactory | None = None) -> None:
        self.url = url
        self.client_factory = client_factory or default_client

    def search(self, query: str, limit: int) -> list[SearchHit]:
        import httpx

        try:
            with self.client_factory() as client:
                response = client.get(self.url, params={"q": query, "format": "json"})
                response.raise_for_status()
                data: Any = response.json()
        except httpx.HTTPStatusError as exc:
            status = exc.response.status_code
            raise ConnectionError(
                f"web_search: the search service answered HTTP {status}"
            ) from None
        except httpx.HTTPError as exc:
            raise ConnectionError(f"web_search: cannot reach the search service: {exc}") from None
        except ValueError:
            raise ConnectionError("web_search: the search service did not answer JSON") from None
        results = data.get("results") if isinstance(data, dict) else None
        hits: list[SearchHit] = []
        for item in results if isinstance(results, list) else []:
            if isinstance(item, dict) and isinstance(item.get("url"), str):
                title, snippet = item.get("title"), item.get("content")
                hits.append(
                    SearchHit(
                        " ".join(str(title or item["url"]).split()),
                        item["url"],
                        " ".join(str(snippet or "").split()),
                    )
                )
        return hits[:limit]


@dataclass(frozen=True, slots=True)
class Page:
    """A fetched page: where it ended up after redirects, its title and text, and whether
    the download stopped at the size cap."""

    url: str
    title: str
    text: str
    cut: bool


def fetch_page(url: str, client_factory: ClientFactory | None = None) -> Page:
    """GET ``url`` (following redirects, reading at most the download cap) and turn it into
    readable text; ConnectionError, TimeoutError or ValueError with one line otherwise."""
    import httpx

    if not url.startswith(("http://", "https://")):
        raise ValueError(f"web_fetch: only http:// and https:// addresses, not {url!r}")
    try:
        with (
            (client_factory or default_client)() as client,
            client.stream("GET", url, follow_redirects=True) as response,
        ):
            if response.status_code >= 400:
                reason = response.reason_phrase
                raise ConnectionError(
                    f"web_fetch: {url} answered HTTP {response.status_code} {reason}".rstrip()
                )
            body, cut = bytearray(), False
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > caps.WEB_DOWNLOAD_MAX_BYTES:
                    del body[caps.WEB_DOWNLOAD_MAX_BYTES :]
                    cut = True
                    break
            final = str(response.url)
            kind = response.headers.get("content-type", "").lower()
            encoding = response.encoding or "utf-8"
    except httpx.TimeoutException:
        raise TimeoutError(
            f"web_fetch: {url} did not answer within {TIMEOUT_SECONDS:g} s"
        ) from None
    except httpx.TooManyRedirects:
        raise ConnectionError(
            f"web_fetch: {url} redirects more than {MAX_REDIRECTS} times"
        ) from None
    except httpx.HTTPError as exc:
        raise ConnectionError(f"web_fetch: cannot fetch {url}: {exc}") from None
    text = bytes(body).decode(encoding, errors="replace")
    if "html" in kind or (not kind and text.lstrip()[:1] == "<"):
        from conch.tools.html_text import html_to_text

        title, readable = html_to_text(text, final)
        return Page(final, title, readable, cut)
    if kind and not any(mark in kind for mark in _TEXTUAL):
        raise ValueError(f"web_fetch: {final} is {kind.split(';')[0]}, not text")
    return Page(final, "", text.strip(), cut)


def render_page(page: Page, start: int) -> str:
    """What ``web_fetch`` returns: the address, the title, then up to the text cap of the
    page's text from character ``start``, with a note on how to read on."""
    head = [f"url: {page.url}"] + ([f"title: {page.title}"] if page.title else [])
    total = len(page.text)
    if start >= total > 0:
        raise ValueError(f"web_fetch: start {start} is past the end of the text ({total} chars)")
    end = min(total, start + caps.WEB_TEXT_CHARS)
    body = page.text[start:end] or "(the page has no text)"
    notes = []
    if end < total:
        notes.append(
            f"[clipped: showed characters {start}-{end} of {total}; read on with "
            f'{{"url": "{page.url}", "start": {end}}}]'
        )
    if page.cut:
        notes.append(
            f"[the page is over {caps.human_size(caps.WEB_DOWNLOAD_MAX_BYTES)}; only its start was read]"
        )
    return "\n".join([*head, "", body, *notes])


def web_tools(
    search: SearchBackend | None = None,
    client_factory: ClientFactory | None = None,
    before_fetch: Callable[[str], None] | None = None,
) -> list[Tool]:
    """``web_fetch``, and ``web_search`` first when a ``search`` backend is given.

    ``client_factory`` makes the ``httpx.Client`` for each fetch (default: ``default_client``).
    ``before_fetch`` hears each URL (or search query) before anything is sent, and raises to
    stop it (the one rule for actions, ``conch.policy.rules``)."""

    def web_fetch(url: str, start: Annotated[int, Field(ge=0)] = 0) -> str:
        """Fetch a web page and read it as plain text (links kept as [text](url)). Long pages
        are cut; the last line gives the exact arguments to read on. If you have a memory
        tool, check memory first and save durable facts you learn with memory append.

        Example: {"url": "https://docs.python.org/3/library/json.html"}
        """
        if before_fetch is not None:
            before_fetch(url)
        return render_page(fetch_page(url, client_factory), start)

    tools = [make_tool(web_fetch, trigger="Read a web page as text, given its URL.")]
    if search is None:
        return tools
    backend = search

    def web_search(
        query: str, limit: Annotated[int, Field(ge=1)] = caps.WEB_SEARCH_LIMIT[0]
    ) -> str:
        """Search the web. Returns numbered results with title, URL and a snippet; read a
        result with web_fetch. If you have a memory tool, search memory too, and save durable
        facts you learn with memory append. limit is at most 10.

        Example: {"query": "python 3.12 release date", "limit": 5}
        """
        if not query.strip():
            raise ValueError("web_search: the query is empty")
        if before_fetch is not None:
            before_fetch(f"search: {query.strip()}")
        hits = backend.search(query.strip(), min(limit, caps.WEB_SEARCH_LIMIT[1]))
        if not hits:
            return f"no results for {query!r}"
        lines: list[str] = []
        for rank, hit in enumerate(hits, 1):
            lines.append(f"{rank}. {hit.title}\n   {hit.url}")
            if hit.snippet:
                lines.append(f"   {hit.snippet[:300]}")
        return "\n".join(lines)

    return [make_tool(web_search, trigger="Search the web for pages about a question."), *tools]
