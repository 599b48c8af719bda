"""HTML to readable text for the model, with the standard library's HTML parser.

Scripts, styles and other non-content elements are dropped; headings become ``#`` lines, list
items ``- `` lines, table cells are separated by ``|``, links keep their address as
``[text](url)``, and ``<pre>`` keeps its layout. Whitespace elsewhere is collapsed and blank
lines are kept to one.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "iframe", "object", "canvas"})
_BLOCK = frozenset(
    {
        "address", "article", "aside", "blockquote", "details", "dd", "div", "dl", "dt",
        "fieldset", "figcaption", "figure", "footer", "form", "header", "main", "nav", "ol",
        "p", "section", "summary", "table", "tr", "ul", "caption",
    }
)  # fmt: skip
_SPACE = re.compile(r"\s+")


class _Reader(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.out: list[str] = []
        self.title = ""
        self._skip = 0
        self._pre = 0
        self._in_title = False
        self._links: list[tuple[int, str]] = []

    # -- output ----------------------------------------------------------------------------

    def _at_line_start(self) -> bool:
        return not self.out or self.out[-1].endswith("\n")

    def _newline(self, blank: bool = False) -> None:
        if not self.out:
            return
        if not self._at_line_start():
            self.out.append("\n")
        if blank and not "".join(self.out[-2:]).endswith("\n\n"):
            self.out.append("\n")

    def _emit(self, text: str) -> None:
        if self._at_line_start():
            text = text.lstrip(" ")
        elif self.out and self.out[-1].endswith(" ") and text.startswith(" "):
            text = text[1:]
        if text:
            self.out.append(text)

    # -- parser callbacks ------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self._skip += 1
            return
        if self._skip:
            return
        if tag == "title":
            self._in_title = True
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._newline(blank=True)
            self._emit("#" * int(tag[1]) + " ")
        elif tag == "li":
            self._newline()
            self._emit("- ")
        elif tag in ("td", "th"):
            if not self._at_line_start():
                self._emit(" | ")
        elif tag == "br":
            self.out.append("\n")
        elif tag == "hr":
            self._newline()
            self.out.append("---\n")
        elif tag == "pre":
            self._newline(blank=True)
            self._pre += 1
        elif tag == "img":
            alt = dict(attrs).get("alt")
            if alt:
                self._emit(f" {alt.strip()} ")
        elif tag == "a":
            href = dict(attrs).get("href") or ""
            self._links.append((len(self.out), urljoin(self.base_url, href.strip())))
        elif tag in _BLOCK:
            self._newline(blank=tag in ("p", "blockquote", "table", "ul", "ol"))

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self._skip = max(0, self._skip - 1)
            return
        if self._skip:
            return
        if tag == "title":
            self._in_title = False
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._newline(blank=True)
        elif tag == "pre":
            self._pre = max(0, self._pre - 1)
            self._newline(blank=True)
        elif tag == "a" and self._links:
            start, url = self._links.pop()
            label = "".join(self.out[start:]).strip()
            if label and url.startswith(("http://", "https://")) and label != url:
                self.out.insert(start, "[")
                self.out.append(f"]({url})")
        elif tag in _BLOCK:
            self._newline(blank=tag in ("p", "blockquote", "table", "ul", "ol"))

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._in_title:
            self.title += data
        elif self._pre:
            self.out.append(data)
        else:
            self._emit(_SPACE.sub(" ", data))


def html_to_text(html: str, base_url: str = "") -> tuple[str, str]:
    """The page's title and its readable text; links are made absolute against ``base_url``."""
    reader = _Reader(base_url)
    reader.feed(html)
    reader.close()
    lines = [line.rstrip() for line in "".join(reader.out).splitlines()]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    return " ".join(reader.title.split()), text
