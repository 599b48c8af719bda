"""What conch sends: system prompt layers, scope listing, peek and stdin caps."""

from __future__ import annotations

from pathlib import Path

import pytest

from conch.command.request import (
    RequestContext,
    build_messages,
    peek_file,
    sanitize,
    scope_dot_listing,
)
from conch.config.settings import AllowedProgram, PromptConfig
from conch.errors import InputError


def test_system_prompt_has_meta_platform_and_tool_instructions() -> None:
    prompt = PromptConfig(
        meta_prompt="META", tools=[AllowedProgram(name="jq", config="use jq -r for raw strings")]
    )
    messages = build_messages(prompt, "OS: Linux", RequestContext(request="get names"))
    system = messages[0].content
    assert system.startswith("META")
    assert "OS: Linux" in system
    assert "Allowed tools (use only these programs): jq" in system
    assert "use jq -r for raw strings" in system
    assert messages[1].content == "get names"


def test_scope_hint_and_sample_messages_follow_the_request_in_order() -> None:
    ctx = RequestContext(request="r", scope="logs/**/*.json", peek_samples=[("a.json", "{}")])
    messages = build_messages(PromptConfig(), "p", ctx)
    assert [m.role for m in messages] == ["system", "user", "user", "user"]
    assert "logs/**/*.json" in messages[2].content
    assert messages[3].content.startswith("Here is a sample of the data")


def test_peek_truncates_at_16_kib_with_a_note(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_bytes(b"a" * 20000)
    text = peek_file(big)
    assert text.endswith("(truncated after 16384 bytes)")
    assert text.split("\n")[0] == "a" * 16384
    small = tmp_path / "small.txt"
    small.write_text("hello", encoding="utf-8")
    assert peek_file(small) == "hello"


def test_unreadable_peek_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        peek_file(tmp_path / "missing")
    with pytest.raises(InputError, match="is a directory"):
        peek_file(tmp_path)


def test_scope_dot_listing_marks_dirs_and_truncates(tmp_path: Path) -> None:
    (tmp_path / "dir").mkdir()
    for n in range(300):
        (tmp_path / f"file{n:03}.txt").write_text("", encoding="utf-8")
    listing = scope_dot_listing(tmp_path, limit=400)
    assert "dir/" in listing.splitlines()
    assert listing.endswith("(truncated directory listing)")
    assert len(listing) < 450


def test_control_bytes_are_stripped_from_spliced_text() -> None:
    # the whole escape sequence goes, not just its ESC byte; so do hidden characters
    assert sanitize("ok\x1b[31mred\x00") == "okred"
    assert sanitize("a\u202eb\u200bc\x9b2Jd\r\ne\tf") == "abcd\ne\tf"
