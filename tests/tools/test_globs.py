"""Glob patterns of the file tools: matching, and renaming by a pattern's stars."""

from __future__ import annotations

import pytest

from conch.tools.globs import compile_glob, expand_braces, has_magic, star_rename


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "app.py", True),
        ("*.py", "src/app.py", False),
        ("**/*.py", "src/app.py", True),
        ("**/*.py", "app.py", True),
        ("src/*.{py,toml}", "src/pyproject.toml", True),
        ("file?.txt", "file1.txt", True),
        ("file?.txt", "file10.txt", False),
        ("[!a]*.md", "b.md", True),
        ("[!a]*.md", "a.md", False),
    ],
)
def test_compile_glob_matches_whole_relative_paths(pattern: str, path: str, matches: bool) -> None:
    assert bool(compile_glob(pattern).match(path)) is matches


def test_braces_expand_to_every_choice() -> None:
    assert expand_braces("a.{py,md}") == ["a.py", "a.md"]
    assert expand_braces("{x,y}/{1,2}") == ["x/1", "x/2", "y/1", "y/2"]
    assert expand_braces("plain") == ["plain"]


def test_has_magic_sees_pattern_characters_only() -> None:
    assert has_magic("*.txt") and has_magic("a?.md") and has_magic("[ab].c")
    assert not has_magic("notes 1.txt") and not has_magic("a-b_c.d")


def test_star_rename_carries_each_star_over_in_order() -> None:
    rename = star_rename("photos/IMG_*.jpg", "photos/holiday_*.jpg")
    assert rename is not None
    assert rename("photos/IMG_10.jpg") == "photos/holiday_10.jpg"
    assert rename("photos/cover.png") is None
    assert rename("photos/sub/IMG_1.jpg") is None  # a star stays inside one directory
    two = star_rename("*-*.log", "*/*.log")
    assert two is not None and two("app-2024.log") == "app/2024.log"


@pytest.mark.parametrize(
    ("pattern", "destination"),
    [
        ("*.txt", "out"),  # no star on the other side: a move into a directory
        ("*.txt", "*-*.md"),  # a different number of stars
        ("file?.txt", "file*.md"),  # another pattern character
        ("**/*.txt", "**/*.md"),  # any depth is not a rename
        ("notes.txt", "notes.md"),  # no star at all
    ],
)
def test_star_rename_refuses_what_does_not_pair_up(pattern: str, destination: str) -> None:
    assert star_rename(pattern, destination) is None
