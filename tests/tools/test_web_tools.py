"""The web tools against a real HTTP server on 127.0.0.1 (never the internet)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from conch.messages import ToolResult
from conch.tools import SearchHit, SearxngSearch, Tool, web_tools
from conch.tools.caps import WEB_DOWNLOAD_MAX_BYTES, WEB_TEXT_CHARS
from conch.tools.html_text import html_to_text

Call = Callable[..., ToolResult]

PAGE = """<!doctype html><html><head><title> The  Page </title>
<style>body { color: red }</style><script>var secret = 1;</script></head>
<body><nav><a href="/">Home</a></nav>
<h1>Welcome</h1><p>Some   text with <b>bold</b> and a <a href="/other.html">link</a>.</p>
<ul><li>one</li><li>two</li></ul>
<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
<pre>  keep
    this</pre><p>caf&eacute; &amp; tea</p></body></html>"""


class Handler(BaseHTTPRequestHandler):
    searches: ClassVar[list[dict[str, list[str]]]] = []

    def log_message(self, format: str, *args: object) -> None:  # keep test output clean
        pass

    def reply(self, status: int, kind: str, body: bytes, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        html = "text/html; charset=utf-8"
        if url.path == "/page.html":
            self.reply(200, html, PAGE.encode("utf-8"))
        elif url.path == "/redirect":
            self.reply(302, "text/plain", b"", Location="/page.html")
        elif url.path == "/loop":
            self.reply(302, "text/plain", b"", Location="/loop")
        elif url.path == "/notes.txt":
            self.reply(200, "text/plain", b"plain notes\n")
        elif url.path == "/long.html":
            words = " ".join(f"w{n:05d}" for n in range(WEB_TEXT_CHARS // 5))
            self.reply(200, html, f"<p>{words}</p>".encode())
        elif url.path == "/huge.txt":
            self.reply(200, "text/plain", b"x" * (WEB_DOWNLOAD_MAX_BYTES + 100_000))
        elif url.path == "/image.png":
            self.reply(200, "image/png", b"\x89PNG\r\n\x1a\n")
        elif url.path == "/search":
            query = parse_qs(url.query)
            Handler.searches.append(query)
            results = [
                {"title": f"Result {n}", "url": f"https://example.org/{n}", "content": "about it"}
                for n in range(1, 8)
            ] + [{"title": "no url"}]
            self.reply(200, "application/json", json.dumps({"results": results}).encode())
        elif url.path == "/empty-search":
            self.reply(200, "application/json", b'{"results": []}')
        else:
            self.reply(404, "text/plain", b"not here")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """One local server for the module; it answers the routes of ``Handler``."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


@pytest.fixture
def call(caller: Callable[[Iterable[Tool]], Call]) -> Call:
    return caller(web_tools())


# -- web_fetch ---------------------------------------------------------------------------


def test_an_html_page_comes_back_as_readable_text(call: Call, server: str) -> None:
    result = call("web_fetch", url=f"{server}/page.html")
    assert not result.is_error
    lines = result.content.splitlines()
    assert lines[:2] == [f"url: {server}/page.html", "title: The Page"]
    text = result.content
    assert "# Welcome" in text
    assert f"Some text with bold and a [link]({server}/other.html)." in text
    assert "- one\n- two" in text
    assert "k | v\na | 1" in text
    assert "  keep\n    this" in text
    assert "café & tea" in text
    assert "secret" not in text and "color" not in text


def test_redirects_are_followed_and_the_final_address_shown(call: Call, server: str) -> None:
    result = call("web_fetch", url=f"{server}/redirect")
    assert result.content.startswith(f"url: {server}/page.html\n")


def test_plain_text_is_returned_as_it_is(call: Call, server: str) -> None:
    assert call("web_fetch", url=f"{server}/notes.txt").content == (
        f"url: {server}/notes.txt\n\nplain notes"
    )


def test_http_errors_redirect_loops_and_refused_connections_are_errors(
    call: Call, server: str
) -> None:
    missing = call("web_fetch", url=f"{server}/missing")
    assert missing.is_error and "answered HTTP 404 Not Found" in missing.content
    loop = call("web_fetch", url=f"{server}/loop")
    assert loop.is_error and "redirects more than 5 times" in loop.content
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    refused = call("web_fetch", url=f"http://127.0.0.1:{port}/")
    assert refused.is_error and "cannot fetch" in refused.content


def test_only_http_addresses_and_text_are_fetched(call: Call, server: str) -> None:
    assert "only http:// and https://" in call("web_fetch", url="file:///etc/passwd").content
    image = call("web_fetch", url=f"{server}/image.png")
    assert image.is_error and "is image/png, not text" in image.content


def test_long_pages_are_clipped_with_the_arguments_to_read_on(call: Call, server: str) -> None:
    url = f"{server}/long.html"
    first = call("web_fetch", url=url).content
    note = first.splitlines()[-1]
    assert note.startswith(f"[clipped: showed characters 0-{WEB_TEXT_CHARS} of ")
    assert note.endswith(f'read on with {{"url": "{url}", "start": {WEB_TEXT_CHARS}}}]')
    rest = call("web_fetch", url=url, start=WEB_TEXT_CHARS).content
    assert "[clipped" not in rest
    assert rest.splitlines()[-1].endswith(f"w{WEB_TEXT_CHARS // 5 - 1:05d}")


def test_downloads_stop_at_the_size_cap(call: Call, server: str) -> None:
    result = call("web_fetch", url=f"{server}/huge.txt")
    assert result.content.splitlines()[-1].startswith("[the page is over 4.0 MiB")


def test_the_client_factory_makes_the_clients(server: str) -> None:
    made: list[httpx.Client] = []

    def factory() -> httpx.Client:
        made.append(httpx.Client(trust_env=False))
        return made[-1]

    (fetch,) = web_tools(client_factory=factory)
    assert "plain notes" in fetch(url=f"{server}/notes.txt")
    assert len(made) == 1 and made[0].is_closed


# -- web_search --------------------------------------------------------------------------


def test_without_a_backend_there_is_no_web_search() -> None:
    assert [t.name for t in web_tools()] == ["web_fetch"]


def test_searxng_search_asks_for_json_and_reads_the_results(server: str) -> None:
    Handler.searches.clear()
    hits = SearxngSearch(f"{server}/search").search("python sockets", 3)
    assert Handler.searches == [{"q": ["python sockets"], "format": ["json"]}]
    assert hits == [
        SearchHit(f"Result {n}", f"https://example.org/{n}", "about it") for n in (1, 2, 3)
    ]


def test_web_search_numbers_results_and_caps_the_limit(
    caller: Callable[[Iterable[Tool]], Call], server: str
) -> None:
    tools = web_tools(SearxngSearch(f"{server}/search"))
    assert [t.name for t in tools] == ["web_search", "web_fetch"]
    call = caller(tools)
    lines = call("web_search", query="python", limit=2).content.splitlines()
    assert lines == [
        "1. Result 1",
        "   https://example.org/1",
        "   about it",
        "2. Result 2",
        "   https://example.org/2",
        "   about it",
    ]
    everything = call("web_search", query="python", limit=50).content
    assert "7. Result 7" in everything and "no url" not in everything


def test_search_failures_and_empty_results(
    caller: Callable[[Iterable[Tool]], Call], server: str
) -> None:
    broken = caller(web_tools(SearxngSearch(f"{server}/nowhere")))
    result = broken("web_search", query="x")
    assert result.is_error and "answered HTTP 404" in result.content
    empty = caller(web_tools(SearxngSearch(f"{server}/empty-search")))
    assert empty("web_search", query="x").content == "no results for 'x'"
    assert empty("web_search", query="  ").is_error


def test_any_object_with_a_search_method_is_a_backend(
    caller: Callable[[Iterable[Tool]], Call],
) -> None:
    class Canned:
        def search(self, query: str, limit: int) -> list[SearchHit]:
            return [SearchHit(query.upper(), "https://example.org", "")][:limit]

    call = caller(web_tools(Canned()))
    assert call("web_search", query="hi").content == "1. HI\n   https://example.org"


def test_the_descriptions_carry_the_knowledge_loop() -> None:
    for item in web_tools(SearxngSearch("http://127.0.0.1:9/search")):
        assert "memory" in item.spec.description
        assert "Example: {" in item.spec.description


# -- html_to_text ------------------------------------------------------------------------


def test_html_to_text_keeps_structure_and_drops_non_content() -> None:
    title, text = html_to_text(
        "<title>T</title><noscript>enable js</noscript><div>a<br>b</div>"
        "<h2>Part</h2><p>x <a href='https://e.org/'>https://e.org/</a></p><hr><img alt='logo'>",
        "https://base.example/",
    )
    assert title == "T"
    assert text == "a\nb\n\n## Part\n\nx https://e.org/\n\n---\nlogo"
