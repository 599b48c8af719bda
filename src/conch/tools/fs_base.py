"""The paths under one sandbox root as the file tools see them: resolving a path a model
names, showing it back, the files a pattern matches, and reading and writing whole text files
with errors that name the action.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from conch.storage.files import atomic_write_text
from conch.tools import caps
from conch.tools.globs import SKIP_DIRS, WALK_MAX, compile_glob, has_magic, walk
from conch.tools.paths import Confined, PathOutsideSandbox

SHOW_MATCHES = 20  # names listed when a pattern is given where a file was expected
# Told of every delete before anything is deleted: the paths as shown (relative to the
# root) and whether a directory is among them; it raises to stop the delete.
BeforeDelete = Callable[[Sequence[str], bool], None]
# Told of every write before it happens: the path (relative to the root), whether the file
# exists (a replacement or an edit) or not (a new file), and the change as a unified diff
# (empty for a directory); it raises to stop it.
BeforeWrite = Callable[[str, bool, str], None]
# Told of every move before it happens: the (source, target) pairs, relative to the root.
BeforeMove = Callable[[Sequence[tuple[str, str]]], None]
# The request the model is working on, for hints that name what it asked for.
Request = Callable[[], str | None]
_NEW_FILE_MODE = 0o644


class SandboxFiles:
    """The files under one sandbox root as the file tools see them (``Files`` adds the
    actions).

    ``prefix`` starts every error message (``fs_`` gives ``fs_read: ...``).
    ``before_delete``: told of every delete (the paths, relative to the root: one, or
    every entry a pattern matches; and whether a directory is among them) before anything
    is deleted; it raises to stop it, and its error is the tool's. ``request``: the request
    the model is working on (None: not known), for a refused delete's hint.
    ``before_write``: told of every write (the path, relative to the root, whether the file
    exists, and the change as a unified diff) before it is made; it raises to stop it.
    ``before_move``: told of every move's (source, target) pairs; it raises to stop them.
    """

    def __init__(
        self,
        confined: Confined,
        prefix: str = "fs_",
        before_delete: BeforeDelete | None = None,
        request: Request | None = None,
        before_write: BeforeWrite | None = None,
    ) -> None:
        self.confined = confined
        self.prefix = prefix
        self.before_delete = before_delete
        self.request = request
        self.before_write = before_write
        self.before_move: BeforeMove | None = None

    def permit_moves(self, pairs: Sequence[tuple[Path, Path]]) -> None:
        """Tell ``before_move`` of ``pairs`` (it raises to stop them)."""
        if self.before_move is not None:
            self.before_move([(self.shown(a), self.shown(b)) for a, b in pairs])

    # -- paths -----------------------------------------------------------------------------

    def resolve(self, action: str, path: str, *, follow_final: bool = True) -> Path:
        """``path`` confined to the root, with the action named in any refusal."""
        try:
            return self.confined.resolve(path, follow_final=follow_final)
        except PathOutsideSandbox as exc:
            raise PathOutsideSandbox(f"{self.prefix}{action}: {exc}") from None
        except ValueError as exc:
            raise ValueError(f"{self.prefix}{action}: {exc}") from None

    def shown(self, target: Path) -> str:
        return self.confined.display(target)

    @property
    def unified(self) -> bool:
        """Whether the model has the one ``fs`` tool (``prefix`` "fs ") instead of split tools."""
        return self.prefix != "fs_"

    def tool(self, action: str) -> str:
        """How the model calls ``action`` in hints: ``fs_move``, or ``fs`` with action "move"."""
        return f'fs with action "{action}"' if self.unified else f"fs_{action}"

    def missing(self, action: str, path: str) -> FileNotFoundError:
        hint = f"; to create a new file, write its whole content with {self.tool('write')}"
        return FileNotFoundError(
            f"{self.prefix}{action}: no such file '{path}' under {self.confined.root}"
            + (hint if action == "edit" else "")
        )

    def existing_file(self, action: str, path: str) -> Path:
        """The resolved path of an existing regular file, or a clear error."""
        target = self.resolve(action, path)
        if target.is_dir():
            rename = (
                f"; to rename or move files, use {self.tool('move')}" if action == "edit" else ""
            )
            raise IsADirectoryError(
                f"{self.prefix}{action}: '{path}' is a directory (use {self.tool('list')} to see it){rename}"
            )
        if not target.exists():
            if has_magic(path) and (found := self.matching(action, path)):
                raise ValueError(
                    f"{self.prefix}{action}: '{path}' is a pattern, not a file; it matches "
                    f"{self.names(found)}. {self.tool(action)} takes one file at a time: call it "
                    f"for each ({self.tool('move')} takes a pattern, to rename or move them all)"
                )
            raise self.missing(action, path)
        if not target.is_file():
            raise ValueError(f"{self.prefix}{action}: '{path}' is not a regular file")
        return target

    def matching(self, action: str, pattern: str) -> list[Path]:
        """The entries under the root whose path matches the glob ``pattern`` (relative to
        the root), sorted; the directories before the first pattern character are where the
        search starts."""
        parts = Path(pattern).parts
        fixed = 0
        while fixed < len(parts) - 1 and not has_magic(parts[fixed]):
            fixed += 1
        base = self.resolve(action, os.path.join(*parts[:fixed]) if fixed else ".")
        if not base.is_dir():
            return []
        matcher = compile_glob("/".join(parts[fixed:]))
        found: list[Path] = []
        for seen, (entry, _is_dir) in enumerate(walk(base, SKIP_DIRS)):
            if seen >= WALK_MAX:
                break
            if matcher.match(entry.relative_to(base).as_posix()):
                found.append(entry)
        return sorted(found)

    def names(self, entries: list[Path]) -> str:
        names = ", ".join(f"'{self.shown(e)}'" for e in entries[:SHOW_MATCHES])
        more = len(entries) - SHOW_MATCHES
        return names + (f" and {more} more" if more > 0 else "")

    def read_text(self, action: str, target: Path) -> str:
        """The whole of a text file, newlines as they are on disk."""
        shown = self.shown(target)
        size = target.stat().st_size
        if size > caps.WRITE_MAX_BYTES:
            raise ValueError(
                f"{self.prefix}{action}: '{shown}' is {caps.human_size(size)}, over the "
                f"{caps.human_size(caps.WRITE_MAX_BYTES)} this action handles"
            )
        data = self._read_bytes(action, target)
        if b"\x00" in data[: caps.SNIFF_BYTES]:
            raise ValueError(f"{self.prefix}{action}: '{shown}' looks like a binary file")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"{self.prefix}{action}: '{shown}' is not UTF-8 text") from None

    def _read_bytes(self, action: str, target: Path) -> bytes:
        try:
            return target.read_bytes()
        except OSError as exc:
            raise OSError(
                f"{self.prefix}{action}: cannot read '{self.shown(target)}': {exc.strerror}"
            ) from None

    def _diff(self, target: Path, exists: bool, text: str) -> str:
        """The change writing ``text`` to ``target`` makes, as a unified diff ("" when the
        old text cannot be read as text)."""
        try:
            old = target.read_text(encoding="utf-8") if exists else ""
        except (OSError, UnicodeDecodeError):
            return ""
        shown = self.shown(target)
        lines = difflib.unified_diff(
            old.splitlines(keepends=True),
            text.splitlines(keepends=True),
            f"a/{shown}" if exists else "/dev/null",
            f"b/{shown}",
        )
        return "".join(lines)

    def write_text(self, action: str, target: Path, text: str) -> None:
        """Replace ``target`` atomically (temp file, then rename), creating parents, once
        ``before_write`` let it."""
        exists = target.exists()
        if self.before_write is not None:
            self.before_write(self.shown(target), exists, self._diff(target, exists, text))
        mode = None if exists else _NEW_FILE_MODE
        try:
            atomic_write_text(target, text, mode)
        except OSError as exc:
            raise OSError(
                f"{self.prefix}{action}: cannot write '{self.shown(target)}': {exc.strerror or exc}"
            ) from None
