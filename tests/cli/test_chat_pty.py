"""The chat REPL on a real pseudo-terminal, as a user at a keyboard drives it: a turn with
its status line, the slash commands, Ctrl+C and Ctrl+D, history search, a question before a
command, and stopping a reply the model is still working on."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pexpect
import pytest

from cliutil import script, spawn_conch, step, write_config
from conch.cli.repl import PROMPT


@pytest.fixture(autouse=True)
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal prompt_toolkit knows; no cursor position requests (pexpect answers none)."""
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setenv("PROMPT_TOOLKIT_NO_CPR", "1")


def finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    status: int = child.exitstatus
    return status


def test_a_turn_shows_the_reply_and_the_status_line(isolated_dirs: Path, tmp_path: Path) -> None:
    script(isolated_dirs, step("fs_write", path="hi.txt", content="hi\n"), "I wrote hi.txt.")
    child = spawn_conch(tmp_path, "chat")
    child.expect_exact("/help for commands, Ctrl+D to leave.")
    child.expect_exact(PROMPT)
    child.send("write hi.txt\r")
    # A write is asked about in chat's mode, as a command that writes would be.
    child.expect_exact("Run it? [y/N/a] ")
    child.send("y\r")
    child.expect_exact("✓ fs_write path=hi.txt content=hi → created 'hi.txt'")
    child.expect_exact("I wrote hi.txt.")
    child.expect(r"● \d+% / \d+ tokens  last: +[\d.]+tk/s")
    child.expect_exact(PROMPT)
    child.send("/tools\r")
    child.expect_exact("tool_lookup")
    child.expect_exact(PROMPT)
    child.send("/exit\r")
    assert finish(child) == 0
    assert (tmp_path / "hi.txt").read_text() == "hi\n"


def test_ctrl_c_clears_the_line_and_ctrl_d_leaves(isolated_dirs: Path, tmp_path: Path) -> None:
    script(isolated_dirs, "The only reply.")
    child = spawn_conch(tmp_path, "chat", "--no-local-session")
    child.expect_exact(PROMPT)
    child.send("a request I changed my mind about")
    child.sendintr()
    child.expect_exact(PROMPT)
    child.send("hello\r")
    # Had the line not been cleared, the model would have been sent both texts as one.
    child.expect_exact("The only reply.")
    child.expect_exact(PROMPT)
    child.sendeof()
    assert finish(child) == 0


def test_three_ctrl_c_in_a_row_leave(isolated_dirs: Path, tmp_path: Path) -> None:
    script(isolated_dirs, "unused")
    child = spawn_conch(tmp_path, "chat")
    child.expect_exact(PROMPT)
    for _ in range(3):
        child.sendintr()
    assert finish(child) == 130


def test_ctrl_r_finds_an_earlier_input(isolated_dirs: Path, tmp_path: Path) -> None:
    script(isolated_dirs, "First answer.", "Second answer.")
    child = spawn_conch(tmp_path, "chat")
    child.expect_exact(PROMPT)
    child.send("tell me about shells\r")
    child.expect_exact("First answer.")
    child.expect_exact(PROMPT)
    child.send("\x12")  # Ctrl+R
    child.send("about sh")
    child.expect(r"tell me \S*about sh\S*ells")  # the match, its found part highlighted
    child.send("\r")  # take the match
    child.send("\r")  # and send it
    child.expect_exact("Second answer.")
    child.expect_exact(PROMPT)
    child.send("/exit\r")
    assert finish(child) == 0
    history = (isolated_dirs / ".local" / "state" / "conch" / "chat_history").read_text()
    assert "+tell me about shells\n" in history


def test_a_command_is_asked_about_and_runs_on_yes(isolated_dirs: Path, tmp_path: Path) -> None:
    script(isolated_dirs, step("bash", command="touch asked.txt"), "Made asked.txt.")
    child = spawn_conch(tmp_path, "chat", "--allow-bash", "--no-act")
    child.expect_exact(PROMPT)
    child.send("make a file\r")
    child.expect_exact("the agent wants to run:")
    child.expect_exact("touch asked.txt")
    child.expect(r"risk: \S*writes")
    child.expect_exact("Run it? [y/N/a] ")
    child.send("y\r")
    child.expect_exact("Made asked.txt.")
    child.expect_exact(PROMPT)
    child.send("/exit\r")
    assert finish(child) == 0
    assert (tmp_path / "asked.txt").exists()


def test_a_delete_of_the_working_directory_is_refused_and_the_reply_says_why(
    isolated_dirs: Path, tmp_path: Path
) -> None:
    (tmp_path / "keep.txt").write_text("kept\n", encoding="utf-8")
    (tmp_path / "old.tmp").write_text("scratch\n", encoding="utf-8")
    script(
        isolated_dirs,
        step("fs_delete", path=str(tmp_path), recursive=True),
        "Done.",  # held back: the delete failed
        "Done.",
    )
    child = spawn_conch(tmp_path, "chat", "--allow-bash", "--no-act")
    child.expect_exact(PROMPT)
    child.send("delete the .tmp files here\r")
    child.expect_exact("✗ fs_delete path=")
    child.expect_exact("refusing to delete the sandbox root")
    child.expect_exact("Done.")
    child.expect_exact(
        "[fs_delete failed: refusing to delete the sandbox root, the whole working directory; "
        "nothing was deleted.]"
    )
    child.expect_exact(PROMPT)
    child.send("/exit\r")
    assert finish(child) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "keep.txt", "old.tmp"]


class _Stalled(BaseHTTPRequestHandler):
    """An OpenAI-compatible server that never answers until the test ends."""

    received = threading.Event()
    release = threading.Event()
    url = ""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.received.set()
        self.release.wait(30)
        self.send_response(503)
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def stalled_server() -> Iterator[type[_Stalled]]:
    events = {"received": threading.Event(), "release": threading.Event()}
    handler = type("Handler", (_Stalled,), events)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        handler.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
        yield handler
    finally:
        handler.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(10)


def test_ctrl_c_stops_a_reply_and_the_chat_goes_on(
    isolated_dirs: Path, tmp_path: Path, stalled_server: type[_Stalled]
) -> None:
    url = stalled_server.url
    write_config(
        isolated_dirs,
        f"ai:\n  provider: openai\n  base_url: {url}\n  model: m\n  max_retries: 0\n",
    )
    child = spawn_conch(tmp_path, "chat")
    child.expect_exact(PROMPT)
    child.send("take your time\r")
    assert stalled_server.received.wait(30)  # the model is at work on the reply
    child.sendintr()
    child.expect_exact("conch: stopped")
    child.expect_exact(PROMPT)
    child.send("/exit\r")
    assert finish(child) == 0
