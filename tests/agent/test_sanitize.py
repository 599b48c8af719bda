"""The two sanitizers: one-line items and paragraph blocks, each with its cap."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from conch import sanitize


def test_one_line_turns_every_control_character_into_a_single_space() -> None:
    text = "list\tfiles\nnow\r\x00and\x07\x7fthen \x85 \u2028done"
    assert sanitize.one_line(text) == "list files now and then done"


def test_one_line_removes_escape_sequences_whole() -> None:
    assert sanitize.one_line("\x1b[31mred\x1b[0m \x1b]0;title\x07ok") == "red ok"


def test_one_line_keeps_non_ascii_text() -> None:
    assert sanitize.one_line("  café  ☕ 東京 ") == "café ☕ 東京"


def test_a_name_is_capped_at_64_characters_and_marked() -> None:
    capped = sanitize.name("n" * 100)
    assert len(capped) == 64
    assert capped.endswith("…")


def test_a_one_line_text_is_capped_at_200_characters_and_marked() -> None:
    capped = sanitize.one_line("word " * 100)
    assert len(capped) <= 200
    assert capped.endswith("…")
    assert sanitize.one_line("short") == "short"


def test_paragraph_keeps_newlines_and_tabs_but_not_other_controls() -> None:
    text = "Rules:\n\t- be \x1b[1mbold\x1b[0m\x07\n\t- no\x7f DEL\x00\r\n"
    assert sanitize.paragraph(text) == "Rules:\n\t- be bold\n\t- no DEL"


def test_an_addendum_is_capped_at_8_kib_with_a_mark() -> None:
    capped = sanitize.paragraph("é" * 10_000)
    assert len(capped.encode("utf-8")) <= 8 * 1024
    assert capped.endswith(sanitize.PARAGRAPH_MARK)
    assert capped.startswith("éé")


def test_the_operator_appendix_is_capped_at_16_kib_with_a_mark() -> None:
    text = "x" * (12 * 1024)
    assert sanitize.appendix(text) == text
    capped = sanitize.appendix("y" * (20 * 1024))
    assert len(capped.encode("utf-8")) <= 16 * 1024
    assert capped.endswith(sanitize.PARAGRAPH_MARK)


@given(st.text(), st.integers(min_value=1, max_value=300))
def test_one_line_never_lets_a_control_character_through(text: str, cap: int) -> None:
    line = sanitize.one_line(text, cap)
    assert len(line) <= cap
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in line)
    assert "\u2028" not in line and "\u2029" not in line


@given(st.text())
def test_a_paragraph_never_holds_an_escape_or_a_carriage_return(text: str) -> None:
    block = sanitize.paragraph(text, 512)
    assert len(block.encode("utf-8")) <= 512
    assert not any(ord(c) < 0x20 and c not in "\n\t" for c in block)
    assert "\x1b" not in block and "\x7f" not in block
