"""The command names of ``conch shell`` (``CommandNames``: for the router and for Tab), and
what Tab offers, without the line editor: command names for the first word, paths for the
others, meta commands after a colon."""

from __future__ import annotations

import os
from collections.abc import Container, Iterable
from typing import TYPE_CHECKING

from conch.shell.route import BUILTINS, known_commands

if TYPE_CHECKING:
    from conch.shell.state import ShellState

__all__ = ["CommandNames", "command_names", "path_completions", "word_kind"]


class CommandNames:
    """The command names of the shell ``state``: bash's builtins, its aliases and the
    programs on its PATH, each view made again when PATH or the aliases change. ``known``
    is the router's (``conch.shell.route.route``: a program is looked up on PATH when asked
    about), ``listed`` Tab's (every name, the PATH directories read once)."""

    def __init__(self, state: ShellState) -> None:
        self.state = state
        self._key: tuple[str, tuple[str, ...]] | None = None
        self._known: Container[str] | None = None
        self._listed: list[str] | None = None

    def known(self) -> Container[str]:
        """The names the router knows."""
        path, aliases = self._current()
        if self._known is None:
            self._known = known_commands(aliases, path=path)
        return self._known

    def listed(self) -> list[str]:
        """Every name, sorted (``command_names``)."""
        path, aliases = self._current()
        if self._listed is None:
            self._listed = command_names(path, aliases)
        return self._listed

    def _current(self) -> tuple[str, tuple[str, ...]]:
        """PATH and the aliases now; the views made for others are forgotten."""
        key = (self.state.env.get("PATH", ""), tuple(sorted(self.state.aliases)))
        if key != self._key:
            self._key, self._known, self._listed = key, None, None
        return key


def command_names(path: str | None, extra: Iterable[str] = ()) -> list[str]:
    """The names of the programs on ``path`` (a PATH string; None: none), bash's builtins and
    ``extra`` (aliases), sorted and each once."""
    names = set(BUILTINS) | set(extra)
    for directory in (path or "").split(os.pathsep):
        if not directory:
            continue
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_file() and os.access(entry.path, os.X_OK):
                    names.add(entry.name)
            except OSError:
                continue
    return sorted(names)


def word_kind(before_cursor: str) -> str:
    """What the word being typed is: ``meta`` (``:name`` first on the line), ``command``
    (the first word, not a path) or ``path``."""
    stripped = before_cursor.lstrip()
    word = stripped.split()[-1] if stripped and not stripped[-1].isspace() else ""
    first = not stripped[: len(stripped) - len(word)].strip()
    if first and word.startswith(":"):
        return "meta"
    if first and not word.startswith(("/", ".", "~")) and "/" not in word:
        return "command"
    return "path"


def path_completions(word: str, cwd: str, home: str | None) -> list[str]:
    """The paths that complete ``word`` (relative to ``cwd``; ``~`` is ``home``), each as
    the whole word would read, directories with a trailing ``/``. Hidden entries only when
    the word's last part starts with a dot."""
    head, _, tail = word.rpartition("/")
    prefix = head + "/" if "/" in word else ""
    directory = head if "/" in word else "."
    if word.startswith("/") and not head:
        directory = "/"
    if directory.startswith("~") and home:
        directory = home + directory[1:]
    directory = os.path.join(cwd, directory)
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return []
    found = []
    for entry in entries:
        if not entry.name.startswith(tail) or (entry.name.startswith(".") and tail[:1] != "."):
            continue
        try:
            slash = "/" if entry.is_dir() else ""
        except OSError:
            slash = ""
        found.append(f"{prefix}{entry.name}{slash}")
    return found
