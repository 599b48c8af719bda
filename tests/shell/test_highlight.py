"""Code blocks of replies coloured for the terminal, and left plain where colour is not
wanted."""

from __future__ import annotations

import re

import pytest

from conch.shell import highlight
from conch.shell.highlight import Highlighter, available, color_wanted, lexer_name

ESC = "\x1b["
REPLY = (
    "Use a list comprehension:\n"
    "```python\n"
    "squares = [x * x for x in range(10)]\n"
    "```\n"
    "Then run it.\n"
)

needs_pygments = pytest.mark.skipif(not available(), reason="Pygments is not installed")


def test_colour_is_for_terminals_without_no_color() -> None:
    assert color_wanted(True, {"TERM": "xterm-256color"})
    assert not color_wanted(False, {"TERM": "xterm-256color"})
    assert not color_wanted(True, {"NO_COLOR": ""})
    assert not color_wanted(True, {"TERM": "dumb"})


def test_a_disabled_highlighter_changes_nothing() -> None:
    plain = Highlighter(enabled=False)
    assert plain.reply(REPLY) == REPLY
    assert plain.code("x = 1\n", "python") == "x = 1\n"


@needs_pygments
@pytest.mark.parametrize(
    ("info", "name"),
    [
        ("python", "python"),
        ("py", "python"),
        ("sh", "bash"),
        ("console", "console"),
        ("src/app.py", "python"),
        ("js title=app.js", "javascript"),
        ("python:tools/build.py", "python"),
        ("Makefile", "make"),
        ("", None),
        ("no-such-language", None),
    ],
)
def test_the_fence_label_names_the_language(info: str, name: str | None) -> None:
    assert lexer_name(info) == name


@needs_pygments
def test_only_code_blocks_are_coloured_and_the_text_reads_the_same() -> None:
    shown = Highlighter(enabled=True).reply(REPLY)
    head, _, rest = shown.partition("```python\n")
    body, _, tail = rest.partition("```\n")
    assert head == "Use a list comprehension:\n" and tail == "Then run it.\n"
    assert ESC in body and body.count("\n") == 1  # the body keeps its one line ending
    assert _strip(shown) == REPLY


@needs_pygments
def test_an_unknown_or_unlabelled_block_stays_plain() -> None:
    text = "```\nsome text\n```\n```klingon\nqapla'\n```\n"
    assert Highlighter(enabled=True).reply(text) == text


@needs_pygments
def test_an_unclosed_block_is_coloured_to_the_end() -> None:
    shown = Highlighter(enabled=True).reply("Here:\n```python\nimport os")
    assert ESC in shown and _strip(shown) == "Here:\n```python\nimport os"


@needs_pygments
def test_escape_sequences_of_the_reply_never_reach_the_terminal() -> None:
    shown = Highlighter(enabled=True).code("print('\x1b]0;owned\x07hi')\n", "python")
    assert "\x1b]" not in shown and "owned" not in shown and "hi" in shown


def test_without_pygments_every_block_stays_plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(highlight, "_pygments", lambda: None)
    assert not available()
    assert Highlighter(enabled=True).reply(REPLY) == REPLY
    assert lexer_name("python") is None


def _strip(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", text)
