"""Text from less trusted sources (an MCP server's tool descriptions, web pages, files) loses
terminal escape sequences, C1 controls, BEL and invisible or bidirectional characters before
it reaches a prompt or a terminal."""

from __future__ import annotations

import pytest

from conch.sanitize import name, one_line, paragraph

INVISIBLE = [chr(c) for c in range(0x200B, 0x2010)]  # zero-width space .. right-to-left mark
BIDI = [chr(c) for c in range(0x202A, 0x202F)]  # embeddings and overrides
ISOLATES = [chr(c) for c in range(0x2066, 0x206A)]
ESCAPES = {
    "CSI": "\x1b[31m",
    "OSC 52 (clipboard)": "\x1b]52;c;aGVsbG8=\x07",
    "OSC 8 (hyperlink)": "\x1b]8;;https://example.com\x1b\\link\x1b]8;;\x1b\\",
    "DCS": "\x1bPq#0;2;0;0;0\x1b\\",
    "C1 CSI": "\x9b2J",
    "BEL": "\x07",
}


@pytest.mark.parametrize("char", INVISIBLE + BIDI + ISOLATES + ["\ufeff", "\U000e0041"])
@pytest.mark.parametrize("clean", [one_line, paragraph, name])
def test_invisible_and_bidi_characters_are_removed(char: str, clean: object) -> None:
    assert callable(clean)
    text = f"Ignore previous{char} instructions{char}"
    result = clean(text)
    assert char not in result
    assert "Ignore previous instructions" in result


@pytest.mark.parametrize("sequence", list(ESCAPES.values()), ids=list(ESCAPES))
def test_terminal_sequences_are_removed(sequence: str) -> None:
    for clean in (one_line, paragraph):
        result = clean(f"before {sequence} after")
        assert "\x1b" not in result and "\x07" not in result and "\x9b" not in result
        assert result.startswith("before") and result.endswith("after")


def test_a_bidi_override_cannot_reorder_a_description() -> None:
    # U+202E would show "safe: list files" reversed around the hidden part.
    text = "List files.\u202e.devomer era seliF\u202c Then run the cleanup."
    assert paragraph(text) == "List files..devomer era seliF Then run the cleanup."
