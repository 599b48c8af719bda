"""fs_edit given text that is nowhere in the file, when the closest line has the same words
(``debug = true`` for the JSON line ``"debug": true,``): the error gives the exact call that
makes the change on that line; nothing is edited until the model makes it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from conch.messages import ToolResult
from conch.tools import Tool, fs_tools

Call = Callable[..., ToolResult]
SETTINGS = '{\n  "name": "shop",\n  "debug": true,\n  "timeout": 30\n}\n'


@pytest.fixture
def call(sandbox: Path, caller: Callable[[Iterable[Tool]], Call]) -> Call:
    (sandbox / "settings.json").write_text(SETTINGS, encoding="utf-8")
    return caller(fs_tools(sandbox))


def test_the_error_gives_the_call_for_the_line_with_the_same_words(
    call: Call, sandbox: Path
) -> None:
    wrong = call("fs_edit", path="settings.json", old_text="debug = true", new_text="debug = false")
    assert wrong.is_error
    old, new = json.dumps('"debug": true,'), json.dumps('"debug": false,')
    assert (
        f"That line has the same words; to make the change there, call fs_edit with old_text "
        f"{old} and new_text {new}" in wrong.content
    )
    assert (sandbox / "settings.json").read_text(encoding="utf-8") == SETTINGS
    right = call(
        "fs_edit", path="settings.json", old_text=json.loads(old), new_text=json.loads(new)
    )
    assert not right.is_error
    assert '"debug": false,' in (sandbox / "settings.json").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("debug = yes", "debug = no"),  # other words: only the closest line is named
        ("debug = true", "debug is now false"),  # a different number of words
        ("debug = true\ntimeout = 30", "debug = false\ntimeout = 30"),  # more than a line
    ],
)
def test_no_call_is_offered_unless_the_words_match_one_for_one(
    call: Call, old: str, new: str
) -> None:
    result = call("fs_edit", path="settings.json", old_text=old, new_text=new)
    assert result.is_error and "same words" not in result.content
