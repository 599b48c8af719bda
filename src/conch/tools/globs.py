"""Glob patterns for the file tools, and walking a tree without leaving it.

Patterns follow the shell, plus ``**`` for any number of directories and ``{a,b}`` for
alternatives: ``*.py`` matches at the top level only, ``**/*.py`` at any depth,
``src/**/*.{py,toml}`` both kinds under ``src``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

SKIP_DIRS = frozenset({".git", ".hg", ".svn"})  # not entered by list, grep or a pattern
WALK_MAX = 50_000  # entries looked at by one list, glob, grep or pattern
_BRACES = re.compile(r"\{([^{}]*)\}")
_MAGIC = re.compile(r"[*?\[]")


def has_magic(text: str) -> bool:
    """Whether ``text`` holds a pattern character (``*``, ``?`` or ``[``)."""
    return _MAGIC.search(text) is not None


def star_rename(pattern: str, destination: str) -> Callable[[str], str | None] | None:
    """The renaming ``IMG_*.jpg`` -> ``holiday_*.jpg`` describes: a function from a path the
    pattern matches to its new path, each ``*``'s text carried over in order (``None`` for a
    path that does not match). ``None`` when the two do not pair up: the same number of
    ``*`` in both, at least one, and no other pattern characters."""
    stars = pattern.count("*")
    if not stars or destination.count("*") != stars or "**" in pattern + destination:
        return None
    if has_magic(pattern.replace("*", "")) or has_magic(destination.replace("*", "")):
        return None
    regex = re.compile("([^/]*)".join(re.escape(part) for part in pattern.split("*")) + r"\Z")
    pieces = destination.split("*")

    def rename(path: str) -> str | None:
        found = regex.match(path)
        if found is None:
            return None
        out = pieces[0]
        for captured, piece in zip(found.groups(), pieces[1:], strict=True):
            out += captured + piece
        return out

    return rename


def expand_braces(pattern: str) -> list[str]:
    """``a.{py,md}`` -> ``["a.py", "a.md"]``; patterns without braces come back alone."""
    found = _BRACES.search(pattern)
    if found is None:
        return [pattern]
    head, tail = pattern[: found.start()], pattern[found.end() :]
    out: list[str] = []
    for choice in found.group(1).split(","):
        out.extend(expand_braces(head + choice + tail))
    return out


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regular expression that matches whole relative POSIX paths the way ``pattern`` does."""
    alternatives = [_translate(p) for p in expand_braces(pattern)]
    return re.compile("(?:" + "|".join(alternatives) + r")\Z", re.DOTALL)


def walk(top: Path, skip: frozenset[str] = frozenset()) -> Iterator[tuple[Path, bool]]:
    """Every path under ``top`` as ``(path, is_dir)``, sorted per directory, never following
    symlinks into other directories; directories named in ``skip`` are not entered."""
    for current, dirs, files in os.walk(top, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        base = Path(current)
        for name in dirs:
            yield base / name, True
        for name in sorted(files):
            yield base / name, False
