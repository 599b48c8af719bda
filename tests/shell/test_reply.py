"""What ``conch shell`` shows of a reply: the command output the model made up is left out,
the rest (prose, suggested commands, code) is kept as written."""

from __future__ import annotations

import pytest

from conch.shell.reply import ReplyFilter, clean_reply

KNOWN = frozenset({"ls", "tail", "cat", "grep", "wc"})

# (reply, what is shown, lines left out)
CASES = [
    pytest.param(
        "CMD: ls logs\nexit code: 0\napp.log  error.log\n\n"
        "CMD: tail -n 3 logs/app.log\nexit code: 0\n2024 a\n2024 b\n2024 c",
        "CMD: tail -n 3 logs/app.log",
        7,
        id="the exec-output format imitated, and a replay of a command that ran",
    ),
    pytest.param(
        "To count them:\n\nCMD: `wc -l server.log`\n\nThis counts the lines.",
        "To count them:\n\nCMD: `wc -l server.log`\n\nThis counts the lines.",
        0,
        id="prose around a command is kept as written",
    ),
    pytest.param(
        "CMD: tail -n 3 logs/app.log\nThis shows the last three lines.",
        "CMD: tail -n 3 logs/app.log\nThis shows the last three lines.",
        0,
        id="a sentence right after the command",
    ),
    pytest.param(
        "CMD: cat notes.txt\nstarting the api server\nerror: port 8123 in use\n\n"
        "more made-up output\n\nThe port is taken.",
        "CMD: cat notes.txt\n\nThe port is taken.",
        3,
        id="output after a command, blank lines included, up to a sentence",
    ),
    pytest.param(
        "CMD: tail -n 3 app.log\n\nThis will output:\n```\nline 1\nline 2\n```\n\nLet me know.",
        "CMD: tail -n 3 app.log\n\nLet me know.",
        3,
        id="a code block of output after a command, with the line introducing it",
    ),
    pytest.param(
        'CMD: cat config.json\n```json\n{"port": 8123}\n```',
        "CMD: cat config.json",
        1,
        id="after a command, a block in any language is made-up output",
    ),
    pytest.param(
        "Save this as fix.py:\n```python\nprint('hi')\n```\nThen run:\nCMD: python3 fix.py",
        "Save this as fix.py:\n```python\nprint('hi')\n```\nThen run:\nCMD: python3 fix.py",
        0,
        id="code before any command is kept",
    ),
    pytest.param(
        "1. List them:\nCMD: ls logs\n2. Show the end:\nCMD: tail -n 3 logs/app.log",
        "1. List them:\nCMD: ls logs\n2. Show the end:\nCMD: tail -n 3 logs/app.log",
        0,
        id="numbered steps, each a command",
    ),
    pytest.param(
        "Like this:\n```console\n$ ls logs\napp.log  error.log\n$ tail -n 1 logs/app.log\n"
        "2024 c\n```\nDone.",
        "Like this:\n```console\n$ ls logs\n$ tail -n 1 logs/app.log\n```\nDone.",
        2,
        id="a terminal session keeps its prompt lines only",
    ),
    pytest.param(
        "$ ls\nfoo  bar\n\nThe files are listed above.",
        "$ ls\n\nThe files are listed above.",
        1,
        id="a prompt line outside a block keeps, its output goes",
    ),
    pytest.param(
        "Use:\n```bash\ntail -n 3 logs/app.log\n```\n```\n2024 one\n2024 two\n```",
        "Use:\n```bash\ntail -n 3 logs/app.log\n```",
        2,
        id="an unlabelled block of output after a shell block",
    ),
    pytest.param(
        "Try:\n```\nls -la\ngrep -r TODO .\n```",
        "Try:\n```\nls -la\ngrep -r TODO .\n```",
        0,
        id="an unlabelled block of commands",
    ),
    pytest.param(
        "Here:\nexit code: 0\nfoo\n\nThat is all.",
        "That is all.",
        3,
        id="an exit code line anywhere, and what introduces it",
    ),
    pytest.param(
        "No command is needed; the port is in use.\n\nStop the other process first.",
        "No command is needed; the port is in use.\n\nStop the other process first.",
        0,
        id="plain prose",
    ),
    pytest.param(
        "I ran it for you:\nCMD: ls logs\n\nThe directory holds two logs.",
        "I ran it for you:\nCMD: ls logs\n\nThe directory holds two logs.",
        0,
        id="a command that ran, suggested again without made-up output, stays",
    ),
]


@pytest.mark.parametrize(("reply", "shown", "dropped"), CASES)
def test_made_up_output_is_left_out_and_the_rest_kept(reply: str, shown: str, dropped: int) -> None:
    cleaned = clean_reply(reply, ran=["ls logs"], known=KNOWN)
    assert cleaned.text == shown
    assert cleaned.dropped == dropped


@pytest.mark.parametrize(("reply", "shown", "dropped"), CASES)
def test_streamed_in_any_pieces_the_reply_shows_the_same(
    reply: str, shown: str, dropped: int
) -> None:
    for size in (1, 3, 8):
        stream = ReplyFilter(["ls logs"], KNOWN)
        pieces = [stream.feed(reply[i : i + size]) for i in range(0, len(reply), size)]
        pieces.append(stream.end())
        assert "".join(pieces) == shown == stream.text
        assert stream.dropped == dropped
        assert stream.end() == ""


def test_a_line_is_shown_once_it_ends() -> None:
    stream = ReplyFilter(known=KNOWN)
    assert stream.feed("The port is ") == ""
    assert stream.feed("taken.\nCMD: ls") == "The port is taken."
    assert stream.feed("\n") == "\nCMD: ls"
    assert stream.feed("app.log\n") == ""  # made-up output
    assert stream.end() == ""
