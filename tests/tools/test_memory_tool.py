"""The memory tool: markdown notes named by sorted keywords; fix- entries never change."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from conch.messages import ToolResult
from conch.tools import Tool, memory_tool, memory_vocabulary
from conch.tools.caps import MEMORY_LIST, MEMORY_SEARCH
from conch.tools.memory import entry_name, keywords_of

Call = Callable[..., ToolResult]


@pytest.fixture
def memory_dir(tmp_path: Path) -> Path:
    return tmp_path / "memory"


@pytest.fixture
def call(memory_dir: Path, caller: Callable[[Iterable[Tool]], Call]) -> Call:
    return caller([memory_tool(memory_dir)])


def entry(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


# -- names -------------------------------------------------------------------------------


def test_an_entry_is_named_by_its_keywords_sorted(call: Call, memory_dir: Path) -> None:
    result = call("memory", action="append", keywords="python async sockets", content="Use x.")
    assert result.content == 'created "async_python_sockets.md" (7 bytes)'
    assert (memory_dir / "async_python_sockets.md").read_text(encoding="utf-8") == "Use x.\n"


def test_keyword_order_case_and_repeats_name_the_same_entry(call: Call, memory_dir: Path) -> None:
    call("memory", action="append", keywords="python async sockets", content="first")
    result = call("memory", action="append", keywords="Sockets, PYTHON async python", content="2")
    assert result.content == 'updated "async_python_sockets.md" (+8 B → 14 B total)'
    assert (memory_dir / "async_python_sockets.md").read_text(encoding="utf-8") == (
        "first\n\n---\n\n2\n"
    )
    assert [p.name for p in memory_dir.glob("*.md")] == ["async_python_sockets.md"]


def test_keywords_are_words_with_inner_hyphens_kept() -> None:
    assert keywords_of("Git_rebase, merge-conflict  git!") == ["git", "merge-conflict", "rebase"]
    assert entry_name(["b", "a"], fixed=True) == "fix-a_b.md"


# -- fixed entries -----------------------------------------------------------------------


def test_fix_entries_cannot_be_appended_to(call: Call, memory_dir: Path) -> None:
    fixed = entry(memory_dir, "fix-async_python.md", "Written by a person.\n")
    result = call("memory", action="append", keywords="python async", content="overwrite?")
    assert result.is_error
    assert "fix-async_python.md is fixed (immutable), cannot append" in result.content
    assert fixed.read_text(encoding="utf-8") == "Written by a person.\n"
    assert not (memory_dir / "async_python.md").exists()


def test_keywords_starting_fix_are_reserved(call: Call, memory_dir: Path) -> None:
    result = call("memory", action="append", keywords="fix-python", content="x")
    assert result.is_error and "reserved" in result.content
    assert not memory_dir.exists() or list(memory_dir.glob("*.md")) == []


def test_fix_entries_can_be_loaded(call: Call, memory_dir: Path) -> None:
    entry(memory_dir, "fix-async_python.md", "Written by a person.\n")
    assert "Written by a person." in call("memory", action="load", keywords="python async").content
    loaded = call("memory", action="load", keywords="fix-async_python.md").content
    assert loaded.startswith("# fix-async_python.md\n")


# -- load, search, list, keywords --------------------------------------------------------


def test_load_by_keywords_or_by_file_name(call: Call, memory_dir: Path) -> None:
    entry(memory_dir, "async_python_sockets.md", "Set a timeout.\n")
    for key in ["sockets python async", "async_python_sockets", "async_python_sockets.md"]:
        assert call("memory", action="load", keywords=key).content == (
            "# async_python_sockets.md\nSet a timeout.\n"
        )


def test_loading_a_missing_entry_names_entries_that_share_keywords(
    call: Call, memory_dir: Path
) -> None:
    entry(memory_dir, "async_python_sockets.md", "x")
    result = call("memory", action="load", keywords="python typing")
    assert result.is_error
    assert "no entry python_typing.md; entries with some of these keywords: " in result.content
    assert "async_python_sockets.md" in result.content


def test_search_ranks_keyword_matches_above_text_matches(call: Call, memory_dir: Path) -> None:
    entry(memory_dir, "git_rebase.md", "How to rebase onto main.\n")
    entry(memory_dir, "python_sockets.md", "A socket timeout example; see git history.\n")
    entry(memory_dir, "cooking.md", "Boil water.\n")
    lines = call("memory", action="search", query="git rebase").content.splitlines()
    assert lines[0] == "2 entries match 'git rebase', best first:"
    assert lines[1].startswith("1. git_rebase.md (")
    assert lines[1].endswith("): How to rebase onto main.")
    assert lines[2].startswith("2. python_sockets.md (")
    assert "no memory entries match" in call("memory", action="search", query="rust").content


def test_search_returns_10_by_default_and_20_at_most(call: Call, memory_dir: Path) -> None:
    for n in range(25):
        entry(memory_dir, f"note_topic{n:02d}.md", "note\n")
    default = call("memory", action="search", query="note").content.splitlines()
    assert sum(line[:1].isdigit() for line in default[1:]) == MEMORY_SEARCH[0]
    most = call("memory", action="search", query="note", limit=500).content.splitlines()
    assert sum(line[:1].isdigit() for line in most[1:]) == MEMORY_SEARCH[1]
    assert f"[showing {MEMORY_SEARCH[1]}; limit goes up to {MEMORY_SEARCH[1]}]" in most


def test_list_shows_50_by_default_and_200_at_most(call: Call, memory_dir: Path) -> None:
    for n in range(210):
        entry(memory_dir, f"n{n:03d}.md", "x")
    default = call("memory", action="list").content.splitlines()
    assert default[0] == "210 memory entries:"
    assert sum(line.endswith("(1 B)") for line in default) == MEMORY_LIST[0]
    most = call("memory", action="list", limit=1000).content.splitlines()
    assert sum(line.endswith("(1 B)") for line in most) == MEMORY_LIST[1]


def test_keywords_lists_the_vocabulary_most_used_first(call: Call, memory_dir: Path) -> None:
    entry(memory_dir, "async_python.md", "x")
    entry(memory_dir, "python_sockets.md", "x")
    entry(memory_dir, "fix-git_python.md", "x")
    (memory_dir / "notes.txt").write_text("not an entry", encoding="utf-8")
    assert memory_vocabulary(memory_dir) == ["python", "async", "git", "sockets"]
    assert memory_vocabulary(memory_dir, limit=2) == ["python", "async"]
    result = call("memory", action="keywords").content
    assert result == "keywords: python, async, git, sockets"


def test_an_empty_or_missing_memory_says_so(call: Call, memory_dir: Path) -> None:
    assert call("memory", action="list").content == "memory is empty"
    assert call("memory", action="keywords").content == "memory is empty"
    assert memory_vocabulary(memory_dir) == []


# -- writing -----------------------------------------------------------------------------


def test_appends_replace_the_file_atomically(call: Call, memory_dir: Path) -> None:
    path = entry(memory_dir, "git.md", "one\n")
    os.link(path, memory_dir / "snapshot")  # an in-place write would change this too
    call("memory", action="append", keywords="git", content="two")
    assert path.read_text(encoding="utf-8") == "one\n\n---\n\ntwo\n"
    assert (memory_dir / "snapshot").read_text(encoding="utf-8") == "one\n"
    leftovers = {p.name for p in memory_dir.iterdir()} - {"git.md", "snapshot", ".memory.lock"}
    assert leftovers == set()


def test_bad_appends_are_explained(call: Call) -> None:
    assert "give keywords" in call("memory", action="append", keywords="!!", content="x").content
    assert "content is empty" in call("memory", action="append", keywords="a", content=" ").content
    many = " ".join(f"k{n}" for n in range(9))
    assert (
        "at most 8 keywords" in call("memory", action="append", keywords=many, content="x").content
    )


def test_the_tool_carries_the_knowledge_loop(memory_dir: Path) -> None:
    item = memory_tool(memory_dir)
    assert item.name == "memory"
    assert "search memory" in item.system and "web" in item.system
    assert '"action": "search"' in item.spec.description
