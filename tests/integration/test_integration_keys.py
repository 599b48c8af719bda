"""The key that sends the command line to conch: what ``--key`` accepts, what it refuses,
and how each shell's binding command gets it."""

from __future__ import annotations

import pytest

from conch.errors import UsageError
from conch.integration.keys import DEFAULT_KEY, Key, parse_key


@pytest.mark.parametrize(
    ("text", "key"),
    [
        (r"\ee", Key("alt", "e")),
        ("alt-e", Key("alt", "e")),
        ("Alt+E", Key("alt", "e")),
        ("M-e", Key("alt", "e")),
        ("meta-k", Key("alt", "k")),
        ("alt-7", Key("alt", "7")),
        (r"\C-x", Key("ctrl", "x")),
        (r"\cx", Key("ctrl", "x")),
        ("ctrl-x", Key("ctrl", "x")),
        ("Ctrl+G", Key("ctrl", "g")),
        ("C-t", Key("ctrl", "t")),
        ("^X", Key("ctrl", "x")),
    ],
)
def test_a_key_is_read_in_the_usual_notations(text: str, key: Key) -> None:
    assert parse_key(text) == key


def test_the_default_key_is_alt_e() -> None:
    assert parse_key(DEFAULT_KEY).name == "Alt+E"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("e", "give Alt or Ctrl"),
        ("", "give Alt or Ctrl"),
        ("alt-", "give Alt or Ctrl"),
        ("alt-ee", "give Alt or Ctrl"),
        ("shift-e", "give Alt or Ctrl"),
        (r"\e'", "a letter or a digit"),
        ("alt-\n", "give Alt or Ctrl"),
        ("ctrl-1", "takes a letter"),
        ("ctrl-c", "interrupts"),
        ("ctrl-d", "ends input"),
        ("ctrl-m", "Enter"),
        ("ctrl-j", "Enter"),
        ("^I", "Tab"),
        ("ctrl-h", "Backspace"),
        ("ctrl-s", "stops output"),
        ("ctrl-q", "resumes"),
        ("ctrl-z", "suspends"),
        ("ctrl-'", "takes a letter"),
        ('ctrl-"', "takes a letter"),
    ],
)
def test_keys_that_are_not_free_or_not_keys_are_refused(text: str, why: str) -> None:
    with pytest.raises(UsageError, match=why) as caught:
        parse_key(text)
    assert "\n" not in str(caught.value).replace(repr(text), "")


@pytest.mark.parametrize(
    ("text", "bash", "zsh", "fish"),
    [
        ("alt-e", r"\ee", r"\ee", r"\ee"),
        ("alt-9", r"\e9", r"\e9", r"\e9"),
        ("ctrl-x", r"\C-x", "^X", r"\cx"),
    ],
)
def test_each_shell_gets_the_key_in_its_own_notation(
    text: str, bash: str, zsh: str, fish: str
) -> None:
    key = parse_key(text)
    assert (key.for_shell("bash"), key.for_shell("zsh"), key.for_shell("fish")) == (bash, zsh, fish)


def test_a_key_written_for_a_shell_holds_no_quote_or_space() -> None:
    # The key goes inside quotes in bash's and zsh's code: it can never end them.
    for char in "abcdefgklnoprtuvwxy0123456789":
        for modifier in ("alt", "ctrl"):
            if modifier == "ctrl" and char.isdigit():
                continue
            for shell in ("bash", "zsh", "fish"):
                written = Key(modifier, char).for_shell(shell)
                assert not set(written) & set("'\" ;$`")
