"""What the file tools do, shared by the one-tool-per-action surface and the batch tool.

``Files`` holds a sandbox (``Confined``) and performs each action, returning the text the
model reads or raising an exception whose message is one line naming the action, the path and
what went wrong. Every write goes to a temp file first and is renamed into place.
"""

from __future__ import annotations

import ast
import json
import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

from conch.tools import caps
from conch.tools.fs_base import SandboxFiles
from conch.tools.fs_deletes import delete
from conch.tools.fs_grep import grep
from conch.tools.fs_moves import move_matching, rename_call, renames_in
from conch.tools.globs import SKIP_DIRS, WALK_MAX, compile_glob, has_magic, walk
from conch.tools.reading import numbered_lines, numbered_span


class Files(SandboxFiles):
    """The actions the file tools offer on the files under one sandbox root (``SandboxFiles``)."""

    # -- read ------------------------------------------------------------------------------

    def read(
        self,
        path: str,
        start_line: int | None = None,
        max_lines: int | None = None,
        offset: int | None = None,
        max_bytes: int | None = None,
    ) -> str:
        """Numbered lines of a text file: by lines when ``start_line`` is given, else by bytes."""
        if start_line is not None and offset is not None:
            raise ValueError(f"{self.prefix}read: give start_line or offset, not both")
        target = self.existing_file("read", path)
        shown, who = self.shown(target), f"{self.prefix}read"
        size = target.stat().st_size
        if size == 0:
            return f"[{shown}: empty file]"
        try:
            with target.open("rb") as handle:
                if b"\x00" in handle.read(caps.SNIFF_BYTES):
                    raise ValueError(
                        f"{self.prefix}read: '{shown}' looks like a binary file "
                        f"({caps.human_size(size)}); {self.tool('read')} shows text only"
                    )
                handle.seek(0)
                if start_line is not None:
                    return numbered_lines(handle, shown, size, start_line, max_lines, who)
                return numbered_span(handle, shown, size, offset or 0, max_bytes, who)
        except OSError as exc:
            raise OSError(f"{self.prefix}read: cannot read '{shown}': {exc.strerror}") from None

    # -- write and edit --------------------------------------------------------------------

    def write(self, path: str, content: str) -> str:
        """Create or replace a file with ``content``."""
        size = len(content.encode("utf-8"))
        if size > caps.WRITE_MAX_BYTES:
            raise ValueError(
                f"{self.prefix}write: {caps.human_size(size)} is over the "
                f"{caps.human_size(caps.WRITE_MAX_BYTES)} one write may hold"
            )
        target = self.resolve("write", path)
        if target.is_dir():
            raise IsADirectoryError(f"{self.prefix}write: '{path}' is a directory")
        existed = target.exists()
        if not existed and ("*" in target.name or "?" in target.name):
            found = self.matching("write", path)
            matches = f"; it matches {self.names(found)}" if found else ""
            raise ValueError(
                f"{self.prefix}write: '{path}' looks like a pattern, not a file name{matches}. "
                "Write each file under its own name"
            )
        self.write_text("write", target, content)
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        verb = "replaced" if existed else "created"
        done = f"{verb} '{self.shown(target)}' ({size} bytes, {lines} lines)"
        warnings = _json_warning(target, content) + _copied_warning(content)
        return done + warnings + _script_warning(target, content)

    def locate(
        self, action: str, shown: str, text: str, old: str, replace_all: bool, new: str = ""
    ) -> list[int]:
        """Where ``old`` starts in ``text``: one place, or every place with ``replace_all``.
        When it is nowhere, the error names the closest line, and the exact call that makes
        the change there when that line has the same words (``_same_words``)."""
        if not old:
            raise ValueError(f"{self.prefix}{action}: old is empty; give the exact text to replace")
        starts = [m.start() for m in re.finditer(re.escape(old), text)]
        if not starts:
            hint = ""
            if old.strip() and old.strip() in text:
                hint = " (it is there with different whitespace at its ends)"
            elif closest := _closest_line(text, old):
                hint = f" (the closest is line {closest[0]}: {closest[1]!r})"
                if (same := _same_words(closest[1], old, new)) is not None:
                    hint += (
                        f". That line has the same words; to make the change there, call "
                        f"{self.tool(action)} with old_text {json.dumps(closest[1])} and new_text "
                        f"{json.dumps(same)}"
                    )
            raise ValueError(
                f"{self.prefix}{action}: the text to replace was not found in '{shown}'{hint}; "
                "read the file and copy the lines exactly"
            )
        if len(starts) > 1 and not replace_all:
            lines = ", ".join(str(text.count("\n", 0, s) + 1) for s in starts[:10])
            raise ValueError(
                f"{self.prefix}{action}: the text to replace occurs {len(starts)} times in "
                f"'{shown}' (lines {lines}); include more surrounding lines to pick one, or "
                "set replace_all to true"
            )
        return starts

    def edit_target(self, path: str, old: str, new: str) -> Path:
        """The file an edit of ``path`` changes. A directory whose entries have ``old`` in
        their names is refused with the move calls that would rename them."""
        folder = self.resolve("edit", path)
        if folder.is_dir() and old and (moves := renames_in(self, folder, old, new)):
            raise IsADirectoryError(
                f"{self.prefix}edit: '{path}' is a directory; {self.tool('edit')} changes the text "
                f"inside one file. To rename what is in it, call {self.tool('move')} for each: "
                + "; ".join(moves)
            )
        return self.existing_file("edit", path)

    def refuse_renaming_edit(self, target: Path, text: str, old: str, new: str) -> None:
        """Refuse an edit whose ``old`` is not in the text but in the file's name, with the
        move call that renames the file."""
        if old and old not in text and old in target.name and new and "/" not in new:
            raise ValueError(
                f"{self.prefix}edit: {old!r} is not in the text of '{self.shown(target)}' but "
                f"in its name, and {self.tool('edit')} changes the text. To rename the file, "
                f"call {self.tool('move')}: " + rename_call(self, target, old, new)
            )

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> str:
        """Replace the exact text ``old`` with ``new``."""
        if old == new:
            raise ValueError(f"{self.prefix}edit: old and new are the same; nothing to change")
        target = self.edit_target(path, old, new)
        shown = self.shown(target)
        text = self.read_text("edit", target)
        self.refuse_renaming_edit(target, text, old, new)
        starts = self.locate("edit", shown, text, old, replace_all, new)
        result = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        self.write_text("edit", target, result)
        lines = ", ".join(str(text.count("\n", 0, s) + 1) for s in starts[:10])
        more = ", ..." if len(starts) > 10 else ""
        times = "1 place" if len(starts) == 1 else f"{len(starts)} places"
        return f"edited '{shown}': replaced {times} (line {lines}{more})"

    # -- list, glob, grep ------------------------------------------------------------------

    def list_dir(self, path: str = ".", recursive: bool = False) -> str:
        """A directory's entries: ``name/`` for directories, sizes for files."""
        target = self.resolve("list", path)
        if not target.exists():
            raise self.missing("list", path)
        if not target.is_dir():
            raise NotADirectoryError(
                f"{self.prefix}list: '{path}' is a file (use {self.tool('read')})"
            )
        entries: Iterable[tuple[Path, bool]]
        if recursive:
            entries = walk(target, SKIP_DIRS)
        else:
            entries = ((p, p.is_dir() and not p.is_symlink()) for p in sorted(target.iterdir()))
        out: list[str] = []
        for entry, is_dir in entries:
            if len(out) >= caps.LIST_MAX_ENTRIES:
                out.append(
                    f"[stopped at {caps.LIST_MAX_ENTRIES} entries; list a subdirectory "
                    f"or use {self.tool('glob')}]"
                )
                break
            out.append(self._entry(entry, target, is_dir))
        shown = self.shown(target)
        if not out:
            return f"'{shown}' is empty"
        return f"contents of '{shown}':\n" + "\n".join(out)

    def _entry(self, entry: Path, base: Path, is_dir: bool) -> str:
        name = entry.relative_to(base).as_posix()
        if entry.is_symlink():
            return f"{name} -> {os.readlink(entry)}"
        if is_dir:
            return f"{name}/"
        try:
            info = entry.stat()
        except OSError:
            return name
        executable = "  executable" if info.st_mode & stat.S_IXUSR else ""
        return f"{name}  {caps.human_size(info.st_size)}{executable}"

    def glob(self, pattern: str, path: str = ".") -> str:
        """Paths under ``path`` that match a glob pattern, sorted."""
        if pattern.startswith("/") or ".." in Path(pattern).parts:
            raise ValueError(
                f"{self.prefix}glob: give a pattern relative to path, like '**/*.py', "
                f"not {pattern!r}"
            )
        base = self.resolve("glob", path)
        if not base.is_dir():
            raise NotADirectoryError(f"{self.prefix}glob: '{path}' is not a directory")
        matcher = compile_glob(pattern)
        found: list[str] = []
        for seen, (entry, is_dir) in enumerate(walk(base)):
            if seen >= WALK_MAX or len(found) >= caps.GLOB_MAX_MATCHES:
                found.append(f"[stopped after {len(found)} matches; narrow the pattern]")
                break
            rel = entry.relative_to(base).as_posix()
            if matcher.match(rel):
                found.append(self.shown(entry) + ("/" if is_dir else ""))
        if not found:
            return f"no paths match '{pattern}' under '{self.shown(base)}'"
        return "\n".join(found)

    grep = grep  # lines matching a regular expression, as ``file:line:text`` (``fs_grep``)

    # -- mkdir, delete, diff ---------------------------------------------------------------

    def mkdir(self, path: str) -> str:
        """Create a directory and any missing parents."""
        target = self.resolve("mkdir", path)
        shown = self.shown(target)
        if target.is_dir():
            return f"'{shown}' already exists"
        if target.exists():
            raise FileExistsError(f"{self.prefix}mkdir: '{shown}' exists and is a file")
        if self.before_write is not None:
            self.before_write(shown, False, "")
        try:
            target.mkdir(parents=True)
        except OSError as exc:
            raise OSError(f"{self.prefix}mkdir: cannot create '{shown}': {exc.strerror}") from None
        return f"created directory '{shown}'"

    def delete(self, path: str, recursive: bool = False) -> str:
        """Delete a file, a symlink (not what it points to) or, with ``recursive``, a directory;
        a pattern (``*.tmp``) deletes every entry it matches. Never the sandbox root, a
        directory above it or the working directory. ``before_delete`` is asked first."""
        return delete(self, path, recursive)

    def move(self, path: str, destination: str) -> str:
        """Rename or move a file or directory; into ``destination`` when it is a directory.
        An existing file at the destination is not replaced."""
        source = self.resolve("move", path, follow_final=False)
        if has_magic(path) and not source.exists() and not source.is_symlink():
            return move_matching(self, path, destination)
        if source == self.confined.root:
            raise PermissionError(f"{self.prefix}move: refusing to move the sandbox root")
        if not source.exists() and not source.is_symlink():
            raise self.missing("move", path)
        target = self.resolve("move", destination)
        if target.is_dir():
            target = target / source.name
        shown_from, shown_to = self.shown(source), self.shown(target)
        if target.exists() or target.is_symlink():
            raise FileExistsError(
                f"{self.prefix}move: '{shown_to}' already exists; delete it first or choose "
                "another name"
            )
        self.permit_moves([(source, target)])
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            source.rename(target)
        except OSError as exc:
            raise OSError(
                f"{self.prefix}move: cannot move '{shown_from}' to '{shown_to}': {exc.strerror}"
            ) from None
        return f"moved '{shown_from}' to '{shown_to}'"

    def diff(
        self, path: str, other: str | None = None, new_text: str | None = None, context: int = 3
    ) -> str:
        """A unified diff of ``path`` against another file or against proposed text."""
        import difflib

        if (other is None) == (new_text is None):
            raise ValueError(f"{self.prefix}diff: give exactly one of other or new_text")
        first = self.existing_file("diff", path)
        before = self.read_text("diff", first)
        if other is not None:
            second = self.existing_file("diff", other)
            after, label = self.read_text("diff", second), self.shown(second)
        else:
            after, label = new_text or "", f"{self.shown(first)} (proposed)"
        lines = difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=self.shown(first),
            tofile=label,
            n=max(0, context),
        )
        text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
        if not text:
            return f"no differences between '{self.shown(first)}' and '{label}'"
        return caps.clip_note(text, caps.DIFF_MAX_BYTES, "diff smaller parts")


def _json_warning(target: Path, content: str) -> str:
    """A note when a ``.json`` file was given text that is not JSON, else ``""``."""
    if target.suffix.lower() != ".json" or not content.strip():
        return ""
    try:
        json.loads(content)
    except ValueError as exc:
        return (
            f"; warning: this is not valid JSON ({exc}). If the file should hold JSON, "
            "write it again"
        )
    return ""


def _script_warning(target: Path, content: str) -> str:
    """A note when a ``.py`` file defines functions but its top level does nothing (no call,
    no statement besides definitions, imports and assignments): small models write the
    function and forget to call it, so running the script prints nothing. Else ``""``."""
    name = target.name.lower()
    if target.suffix.lower() != ".py" or name.startswith("test_") or name == "conftest.py":
        return ""  # a test module is run by its runner, not by itself
    try:
        tree = ast.parse(content)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return ""
    calls = (n for n in tree.body if isinstance(n, ast.Assign | ast.AnnAssign))
    if any(isinstance(part, ast.Call) for node in calls for part in ast.walk(node)):
        return ""  # `app = create_app()` does something
    quiet = (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign, ast.Pass)
    functions = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    docstring = ast.get_docstring(tree) is not None
    body = tree.body[1:] if docstring else tree.body
    acts = [n for n in body if not isinstance(n, (*quiet, ast.FunctionDef, ast.AsyncFunctionDef))]
    acts = [n for n in acts if not isinstance(n, ast.ClassDef)]
    if not functions or acts:
        return ""
    named = ", ".join(f"{name}()" for name in functions[:3])
    return (
        f"; note: this script only defines {named} and never calls "
        f"{'it' if len(functions) == 1 else 'them'}, so running it does nothing and prints "
        "nothing. If it should do the work when run, add the call at the end (with print() "
        "for a result)"
    )


# One entry of fs_list's output ("a.csv  0 B", "build  21 B  executable") and one line of
# fs_grep's ("src/main.py:2:text").
_SIZED = re.compile(r"\S.*  \d+(?:\.\d+)? (?:B|KiB|MiB|GiB)(?:  executable)?")
_LISTED = re.compile(rf"{_SIZED.pattern}|\S.*/")
_GREPPED = re.compile(r"[^\s:]*[./][^\s:]*:\d+(?::.*)?")


def _copied_warning(content: str) -> str:
    """A note when every line written is a line of fs_list's or fs_grep's output: a small
    model copies a listing (sizes and all) where the task wanted the names that meet a
    condition, else ``""``."""
    lines = [line.strip() for line in content.splitlines() if line.strip()]
    if len(lines) < 2:
        return ""
    if all(_LISTED.fullmatch(line) for line in lines) and any(_SIZED.fullmatch(x) for x in lines):
        what = "fs_list's output (sizes after the names)"
    elif all(_GREPPED.fullmatch(line) for line in lines):
        what = "fs_grep's output (file:line:text)"
    else:
        return ""
    return (
        f"; note: these lines are {what}, copied. If the file should hold only names, or only "
        "those that meet a condition (empty, larger than a size, executable, containing a "
        "word), write just those: compute them with a command (do or bash) rather than "
        "copying a listing"
    )


_WORD = re.compile(r"\w+")


def _same_words(line: str, old: str, new: str) -> str | None:
    """``line`` with ``new``'s words put in place of ``old``'s, when ``old`` is one line whose
    words are exactly ``line``'s and ``new`` has as many: a small model writes
    ``debug = true`` for the JSON line ``"debug": true,`` and cannot see the difference."""
    if "\n" in old.strip() or "\n" in new.strip():
        return None
    words, before, after = _WORD.findall(line), _WORD.findall(old), _WORD.findall(new)
    if not words or words != before or len(after) != len(before) or before == after:
        return None
    replaced = iter(after)
    return _WORD.sub(lambda _m: next(replaced), line)


def _closest_line(text: str, old: str) -> tuple[int, str] | None:
    """The line of ``text`` most like the first line of ``old`` that is not blank, with its
    number, when one is close enough to be what was meant."""
    import difflib

    wanted = next((line.strip() for line in old.splitlines() if line.strip()), "")
    if not wanted:
        return None
    stripped = [line.strip() for line in text.splitlines()]
    close = difflib.get_close_matches(wanted, stripped, n=1, cutoff=0.6)
    return (stripped.index(close[0]) + 1, close[0]) if close else None
