"""fs_write of a Python script that only defines functions says so: run, it would print
nothing (small models write the function and forget the call)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from conch.messages import ToolResult
from conch.tools import Tool, fs_tools

Call = Callable[..., ToolResult]


@pytest.fixture
def call(sandbox: Path, caller: Callable[[Iterable[Tool]], Call]) -> Call:
    return caller(fs_tools(sandbox))


DEFINES_ONLY = "import sys\n\ndef count_words(name):\n    return len(open(name).read().split())\n"


def test_a_script_that_only_defines_a_function_is_written_with_a_note(
    call: Call, sandbox: Path
) -> None:
    result = call("fs_write", path="count_words.py", content=DEFINES_ONLY)
    assert not result.is_error
    assert result.content.startswith("created 'count_words.py' (")
    assert "; note: this script only defines count_words() and never calls it" in result.content
    assert (sandbox / "count_words.py").read_text() == DEFINES_ONLY


@pytest.mark.parametrize(
    "content",
    [
        DEFINES_ONLY + "\nprint(count_words('essay.txt'))\n",
        DEFINES_ONLY + "\nif __name__ == '__main__':\n    print(count_words(sys.argv[1]))\n",
        "print(len(open('essay.txt').read().split()))\n",
        "class Point:\n    x = 0\n",  # a module of definitions, no function to forget
        "def broken(:\n",  # not Python: nothing to say about it
        "def create_app():\n    return 1\n\napp = create_app()\n",  # the assignment calls
    ],
)
def test_a_script_that_does_something_or_defines_no_function_has_no_note(
    call: Call, content: str
) -> None:
    result = call("fs_write", path="tool.py", content=content)
    assert "note:" not in result.content


def test_other_files_are_not_read_as_python(call: Call) -> None:
    assert "note:" not in call("fs_write", path="notes.txt", content=DEFINES_ONLY).content


def test_a_test_module_has_no_note(call: Call) -> None:
    assert "note:" not in call("fs_write", path="test_count.py", content=DEFINES_ONLY).content
    assert "note:" not in call("fs_write", path="conftest.py", content=DEFINES_ONLY).content
