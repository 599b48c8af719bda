"""Code blocks in the model's replies, coloured for the terminal.

``Highlighter.reply`` colours the body of every fenced code block of a reply by its
language (the fence's label, or the file name it names: ```` ```python ````,
```` ```src/app.py ````, ```` ```js title=app.js ````), and leaves the prose and the fence
lines as they are; ``Highlighter.code`` colours one block, for a front end that shows
blocks as they close (``conch.shell.reply.ReplyFilter`` does). A block in a language it
does not know, or without one, stays plain.

Colour is for terminals only: ``color_wanted`` says no when the output is not a terminal,
``NO_COLOR`` is set or ``TERM`` is ``dumb``, and a ``Highlighter`` that is not ``enabled``
returns its text unchanged. The colours come from Pygments (16 ANSI colours, so the
terminal's own palette applies); without Pygments installed every block stays plain. The
escape sequences a reply itself holds are removed from a block before it is coloured, so only
conch's own colours reach the terminal.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from functools import lru_cache
from types import ModuleType
from typing import Any, Literal

from conch import sanitize
from conch.validate.extract import fences

__all__ = ["Highlighter", "available", "color_wanted", "lexer_name"]

# Labels that name a terminal session rather than a script.
_SESSIONS = frozenset({"console", "shell-session", "terminal"})
_ALIASES = {"sh": "bash", "shell": "bash", "zsh": "bash", "py": "python", "js": "javascript"}
_ALIASES |= {"ts": "typescript", "yml": "yaml", "rs": "rust", "golang": "go", "c++": "cpp"}
_PATH_LIKE = re.compile(r"[\w./-]*\.\w{1,8}$|(?:^|/)(?:Makefile|Dockerfile|CMakeLists\.txt)$")


def color_wanted(isatty: bool, environ: Mapping[str, str]) -> bool:
    """Whether replies should be coloured: the output is a terminal, ``NO_COLOR`` is not
    set (whatever its value, as conch reads it everywhere) and ``TERM`` is not ``dumb``."""
    return isatty and "NO_COLOR" not in environ and environ.get("TERM", "") != "dumb"


def available() -> bool:
    """Whether Pygments is installed (without it, every block stays plain)."""
    return _pygments() is not None


def lexer_name(info: str) -> str | None:
    """The Pygments lexer for a fence's label ``info`` (``python``, ``src/app.py``,
    ``js title=app.js``, ``python:app.py``), or None when it names none that exists."""
    words = info.replace(":", " ").split()
    if not words:
        return None
    pygments = _pygments()
    if pygments is None:
        return None
    lexers, util = pygments.lexers, pygments.util
    first = words[0].lower()
    if first in _SESSIONS:
        return "console"
    name = _ALIASES.get(first, first)
    if not _PATH_LIKE.search(words[0]):
        try:
            return str(lexers.get_lexer_by_name(name).aliases[0])
        except util.ClassNotFound:
            pass
    for word in words:
        path = word.split("=", 1)[-1].strip("\"'")
        if _PATH_LIKE.search(path):
            try:
                return str(lexers.get_lexer_for_filename(path).aliases[0])
            except util.ClassNotFound:
                continue
    return None


class Highlighter:
    """Colours code blocks when ``enabled`` (``color_wanted``); ``background``: the
    terminal's, so colours stay readable on it."""

    def __init__(self, enabled: bool, background: Literal["dark", "light"] = "dark") -> None:
        self.enabled = enabled and available()
        self.background = background

    def code(self, body: str, info: str) -> str:
        """``body`` (a code block's text, without its fences) coloured as ``info`` (the
        fence's label) says; unchanged when not enabled or the language is unknown."""
        if not self.enabled or not body:
            return body
        name = lexer_name(info)
        pygments = _pygments()
        if name is None or pygments is None:
            return body
        clean = sanitize.text(body)
        lexer = pygments.lexers.get_lexer_by_name(name, stripnl=False, ensurenl=False)
        formatter = _formatter(self.background)
        coloured = str(pygments.highlight(clean, lexer, formatter))
        # Pygments ends every text with a newline; keep the body's own ending.
        if coloured.endswith("\n") and not clean.endswith("\n"):
            coloured = coloured[:-1]
        return coloured

    def reply(self, text: str) -> str:
        """``text`` with the body of each fenced code block coloured (``code``); prose and
        fence lines unchanged."""
        if not self.enabled or "```" not in text:
            return text
        out: list[str] = []
        position = 0
        for fence in fences(text):
            body_start, body_end = fence.body_span
            out.append(text[position:body_start])
            out.append(self.code(fence.body, fence.label))
            position = body_end
        out.append(text[position:])
        return "".join(out)


def _formatter(background: str) -> Any:
    pygments = _pygments()
    assert pygments is not None
    return pygments.formatters.TerminalFormatter(bg=background)


@lru_cache(maxsize=1)
def _pygments() -> _Pygments | None:
    """Pygments' parts, imported on first use; None when it is not installed. (Imported by
    name: it ships no type information, so its objects are ``Any`` here.)"""
    try:
        modules = [
            importlib.import_module(name)
            for name in ("pygments", "pygments.lexers", "pygments.formatters", "pygments.util")
        ]
    except ImportError:
        return None
    return _Pygments(*modules)


class _Pygments:
    """The Pygments modules conch uses."""

    def __init__(
        self, root: ModuleType, lexers: ModuleType, formatters: ModuleType, util: ModuleType
    ) -> None:
        self.highlight: Any = root.highlight
        self.lexers: Any = lexers
        self.formatters: Any = formatters
        self.util: Any = util
