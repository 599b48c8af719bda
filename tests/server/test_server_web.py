"""The web chat page in headless Chromium (Debian's ``chromium``): opened at the URL with
the token, as ``conch serve`` prints it, the token kept for the tab and taken out of the
address bar; without it, one line saying where it is. A message sent, the reply streamed in
with the tool call it made, stop, edit-and-retry, conversations kept.

Set ``CONCH_UPDATE_SCREENSHOT=1`` to write docs/images/web-chat.png from the first test.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from playwright import sync_api as playwright
from serverutil import SERVE_REPLY, TOKEN, SlowProvider, serve_process

from conch.messages import GenerationOptions, Message, ToolCall
from conch.providers.scripted import Reply, ScriptedProvider
from requires import needs

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 15_000
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "web-chat.png"

Server = Callable[..., str]

pytestmark = needs("chromium")


@pytest.fixture(scope="module")
def browser() -> Iterator[playwright.Browser]:
    executable = CHROMIUM if os.path.exists(CHROMIUM) else shutil.which("chromium")
    with playwright.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=executable, args=ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: playwright.Browser) -> Iterator[playwright.Page]:
    context = browser.new_context(viewport={"width": 1100, "height": 720})
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)
    yield opened
    context.close()


def _lister(messages: Sequence[Message], options: GenerationOptions) -> Reply:
    if messages[-1].role == "tool" or "Result of bash" in messages[-1].content:
        return "There are two files, notes.txt and todo.md, and one directory, home."
    return ToolCall("c1", "bash", '{"command": "ls"}')


def _open(page: playwright.Page, base: str) -> None:
    """Open the page as ``conch serve`` prints its URL: with the token."""
    page.goto(f"{base}/?token={TOKEN}")


def _send(page: playwright.Page, text: str) -> None:
    page.fill("#input", text)
    page.press("#input", "Enter")


def test_a_message_gets_a_streamed_reply_and_its_tool_call_is_shown(
    server_for: Server, page: playwright.Page, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("n", encoding="utf-8")
    (tmp_path / "todo.md").write_text("t", encoding="utf-8")
    base = server_for(ScriptedProvider.from_function(_lister))
    _open(page, base)
    playwright.expect(page.locator("#model option")).to_have_text(["test-model"])
    assert page.url == f"{base}/"  # the token is out of the address bar
    assert page.evaluate("sessionStorage.getItem('conch.token')") == TOKEN
    playwright.expect(page.locator("#auth-needed")).to_be_hidden()
    _send(page, "What files are in the sandbox?")
    reply = page.locator(".message.assistant .text").last
    playwright.expect(reply).to_have_text(
        "There are two files, notes.txt and todo.md, and one directory, home."
    )
    tool = page.locator(".message.assistant .tool").first
    playwright.expect(tool.locator(".name")).to_have_text("bash")
    playwright.expect(tool.locator(".args")).to_contain_text('"command": "ls"')
    playwright.expect(tool.locator(".result")).to_contain_text("notes.txt")
    playwright.expect(page.locator("#chats li.current")).to_contain_text("What files are in")
    shot = page.screenshot()
    assert shot.startswith(b"\x89PNG")
    if os.environ.get("CONCH_UPDATE_SCREENSHOT") == "1":
        tool.locator("summary").click()  # show the command's output in the picture
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT))


def test_the_reply_arrives_in_pieces(server_for: Server, page: playwright.Page) -> None:
    provider = SlowProvider(words=30, pause=0.03)
    _open(page, server_for(provider))
    page.evaluate(
        """() => {
            window.seen = new Set();
            new MutationObserver(() => {
                const t = document.querySelector('.message.assistant .text');
                if (t) window.seen.add(t.textContent);
            }).observe(document.getElementById('messages'),
                       {subtree: true, childList: true, characterData: true});
        }"""
    )
    _send(page, "count")
    playwright.expect(page.locator(".message.assistant .text")).to_contain_text("w29")
    assert page.evaluate("window.seen.size") > 3  # shown in several steps, not all at once


def test_stop_ends_the_reply_and_the_server_stops_generating(
    server_for: Server, page: playwright.Page
) -> None:
    provider = SlowProvider(words=5000, pause=0.01)
    _open(page, server_for(provider))
    _send(page, "write forever")
    playwright.expect(page.locator(".message.assistant .text")).to_contain_text("w3")
    page.click("#stop")
    playwright.expect(page.locator(".message.assistant .note")).to_have_text("stopped")
    assert provider.closed.wait(WAIT_MS / 1000), "the server kept generating after Stop"
    playwright.expect(page.locator("#send")).to_be_visible()


def test_edit_and_retry_replaces_the_last_message_and_the_chat_survives_a_reload(
    server_for: Server, page: playwright.Page
) -> None:
    provider = ScriptedProvider.from_function(
        lambda messages, options: f"You said: {messages[-1].content}"
    )
    _open(page, server_for(provider))
    _send(page, "helo")
    playwright.expect(page.locator(".message.assistant .text")).to_have_text("You said: helo")
    page.click(".message.user .edit")
    playwright.expect(page.locator("#input")).to_have_value("helo")
    _send(page, "hello")
    playwright.expect(page.locator(".message.assistant .text")).to_have_text("You said: hello")
    playwright.expect(page.locator(".message.user .text")).to_have_text(["hello"])
    assert [m.content for m in provider.sent[-1].messages if m.role == "user"] == ["hello"]
    page.reload()
    playwright.expect(page.locator(".message.user .text")).to_have_text(["hello"])
    playwright.expect(page.locator(".message.assistant .text")).to_have_text(["You said: hello"])


def test_without_the_token_the_page_says_where_it_is(
    server_for: Server, page: playwright.Page
) -> None:
    provider = ScriptedProvider.of("never sent")
    base = server_for(provider)
    page.goto(base + "/")
    notice = page.locator("#auth-needed")
    playwright.expect(notice).to_be_visible()
    playwright.expect(notice).to_contain_text("open the URL conch serve printed")
    _send(page, "hello?")
    playwright.expect(page.locator(".message.assistant .error")).to_contain_text(
        "This server needs its token"
    )
    assert provider.sent == []
    page.fill("#api-key", "wrong-token")
    page.press("#api-key", "Enter")
    playwright.expect(notice).to_be_visible()
    page.fill("#api-key", TOKEN)  # a key typed on the left works as the URL's token does
    page.press("#api-key", "Tab")
    playwright.expect(notice).to_be_hidden()
    playwright.expect(page.locator("#model option")).to_have_text(["test-model"])


def test_the_token_stays_with_the_tab_across_reloads_and_not_in_local_storage(
    server_for: Server, page: playwright.Page
) -> None:
    provider = ScriptedProvider.from_function(lambda messages, options: "Still here.")
    base = server_for(provider)
    _open(page, base)
    page.reload()
    assert page.url == f"{base}/"
    _send(page, "are you there?")
    playwright.expect(page.locator(".message.assistant .text")).to_have_text("Still here.")
    stored = page.evaluate("JSON.stringify(Object.assign({}, localStorage))")
    assert TOKEN not in stored


def test_the_url_conch_serve_prints_opens_the_page_and_it_chats(
    page: playwright.Page, tmp_path: Path
) -> None:
    with serve_process(tmp_path) as served:
        assert "?token=" in served.printed
        page.goto(served.printed)
        playwright.expect(page.locator("#model option")).to_have_text(["scripted"])
        assert page.url == f"{served.base}/"
        _send(page, "hello")
        reply = page.locator(".message.assistant .text")
        playwright.expect(reply).to_have_text(SERVE_REPLY)
        playwright.expect(page.locator("#auth-needed")).to_be_hidden()
