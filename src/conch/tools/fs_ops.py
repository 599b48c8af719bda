"""What the file tools do, shared by the one-tool-per-action surface and the batch tool.

``Files`` holds a sandbox (``Confined``) and performs each action, returning the text the
model reads or raising an exception whose message is one line naming the action, the path and
what went wrong. Every write goes to a temp file first and is renamed into place.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from conch.storage.files import atomic_write_text
from conch.tools import caps
from conch.tools.globs import compile_glob, has_magic, star_rename, walk
from conch.tools.paths import Confined, PathOutsideSandbox
from conch.tools.reading import numbered_lines, numbered_span

_SKIP_DIRS = frozenset({".git", ".hg", ".svn"})
_WALK_MAX = 50_000  # entries looked at by one list, glob or grep
_NEW_FILE_MODE = 0o644
_SNIFF = 8192
_SHOW_MATCHES = 20  # names listed when a pattern is given where a file was expected


class Files:
    """The files under one sandbox root, and the actions the file tools offer on them.

    ``prefix`` starts every error message (``fs_`` gives ``fs_read: ...``).
    ``before_delete``: told of every delete (the path as given, relative to the root, and
    whether it is recursive) before anything is deleted; it raises to stop it, and its
    error is the tool's.
    """

    def __init__(
        self,
        confined: Confined,
        prefix: str = "fs_",
        before_delete: Callable[[str, bool], None] | None = None,
    ) -> None:
        self.confined = confined
        self.prefix = prefix
        self.before_delete = before_delete

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

    def _missing(self, action: str, path: str) -> FileNotFoundError:
        hint = "; to create a new file, write its whole content with fs_write"
        return FileNotFoundError(
            f"{self.prefix}{action}: no such file '{path}' under {self.confined.root}"
            + (hint if action == "edit" else "")
        )

    def existing_file(self, action: str, path: str) -> Path:
        """The resolved path of an existing regular file, or a clear error."""
        target = self.resolve(action, path)
        if target.is_dir():
            rename = "; to rename or move files, use fs_move" if action == "edit" else ""
            raise IsADirectoryError(
                f"{self.prefix}{action}: '{path}' is a directory (use fs_list to see it){rename}"
            )
        if not target.exists():
            if has_magic(path) and (found := self.matching(action, path)):
                raise ValueError(
                    f"{self.prefix}{action}: '{path}' is a pattern, not a file; it matches "
                    f"{self._names(found)}. fs_{action} takes one file at a time: call it "
                    "for each (fs_move takes a pattern, to rename or move them all)"
                )
            raise self._missing(action, path)
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
        base = self.resolve(action, "/".join(parts[:fixed]) or ".")
        if not base.is_dir():
            return []
        matcher = compile_glob("/".join(parts[fixed:]))
        found: list[Path] = []
        for seen, (entry, _is_dir) in enumerate(walk(base, _SKIP_DIRS)):
            if seen >= _WALK_MAX:
                break
            if matcher.match(entry.relative_to(base).as_posix()):
                found.append(entry)
        return sorted(found)

    def _names(self, entries: list[Path]) -> str:
        names = ", ".join(f"'{self.shown(e)}'" for e in entries[:_SHOW_MATCHES])
        more = len(entries) - _SHOW_MATCHES
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
        if b"\x00" in data[:_SNIFF]:
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

    def write_text(self, action: str, target: Path, text: str) -> None:
        """Replace ``target`` atomically (temp file, then rename), creating parents."""
        mode = None if target.exists() else _NEW_FILE_MODE
        try:
            atomic_write_text(target, text, mode)
        except OSError as exc:
            raise OSError(
                f"{self.prefix}{action}: cannot write '{self.shown(target)}': {exc.strerror or exc}"
            ) from None

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
                if b"\x00" in handle.read(_SNIFF):
                    raise ValueError(
                        f"{self.prefix}read: '{shown}' looks like a binary file "
                        f"({caps.human_size(size)}); fs_read shows text only"
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
            matches = f"; it matches {self._names(found)}" if found else ""
            raise ValueError(
                f"{self.prefix}write: '{path}' looks like a pattern, not a file name{matches}. "
                "Write each file under its own name"
            )
        self.write_text("write", target, content)
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        verb = "replaced" if existed else "created"
        done = f"{verb} '{self.shown(target)}' ({size} bytes, {lines} lines)"
        return done + _json_warning(target, content)

    def locate(self, action: str, shown: str, text: str, old: str, replace_all: bool) -> list[int]:
        """Where ``old`` starts in ``text``: one place, or every place with ``replace_all``."""
        if not old:
            raise ValueError(f"{self.prefix}{action}: old is empty; give the exact text to replace")
        starts = [m.start() for m in re.finditer(re.escape(old), text)]
        if not starts:
            hint = ""
            if old.strip() and old.strip() in text:
                hint = " (it is there with different whitespace at its ends)"
            elif closest := _closest_line(text, old):
                hint = f" (the closest is line {closest[0]}: {closest[1]!r})"
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

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> str:
        """Replace the exact text ``old`` with ``new``."""
        if old == new:
            raise ValueError(f"{self.prefix}edit: old and new are the same; nothing to change")
        folder = self.resolve("edit", path)
        if folder.is_dir() and old and (moves := self._renames_in(folder, old, new)):
            raise IsADirectoryError(
                f"{self.prefix}edit: '{path}' is a directory; fs_edit changes the text inside "
                "one file. To rename what is in it, call fs_move for each: " + "; ".join(moves)
            )
        target = self.existing_file("edit", path)
        shown = self.shown(target)
        text = self.read_text("edit", target)
        starts = self.locate("edit", shown, text, old, replace_all)
        result = text.replace(old, new) if replace_all else text.replace(old, new, 1)
        self.write_text("edit", target, result)
        lines = ", ".join(str(text.count("\n", 0, s) + 1) for s in starts[:10])
        more = ", ..." if len(starts) > 10 else ""
        times = "1 place" if len(starts) == 1 else f"{len(starts)} places"
        return f"edited '{shown}': replaced {times} (line {lines}{more})"

    def _renames_in(self, folder: Path, old: str, new: str) -> list[str]:
        """fs_move calls, as JSON, that replace ``old`` with ``new`` in the names of the
        entries of ``folder`` (at most ``_SHOW_MATCHES``)."""
        calls: list[str] = []
        for entry in sorted(folder.iterdir()):
            if old in entry.name and len(calls) < _SHOW_MATCHES:
                renamed = entry.with_name(entry.name.replace(old, new))
                arguments = {"path": self.shown(entry), "destination": self.shown(renamed)}
                calls.append(json.dumps(arguments))
        return calls

    # -- list, glob, grep ------------------------------------------------------------------

    def list_dir(self, path: str = ".", recursive: bool = False) -> str:
        """A directory's entries: ``name/`` for directories, sizes for files."""
        target = self.resolve("list", path)
        if not target.exists():
            raise self._missing("list", path)
        if not target.is_dir():
            raise NotADirectoryError(f"{self.prefix}list: '{path}' is a file (use fs_read)")
        entries: Iterable[tuple[Path, bool]]
        if recursive:
            entries = walk(target, _SKIP_DIRS)
        else:
            entries = ((p, p.is_dir() and not p.is_symlink()) for p in sorted(target.iterdir()))
        out: list[str] = []
        for entry, is_dir in entries:
            if len(out) >= caps.LIST_MAX_ENTRIES:
                out.append(
                    f"[stopped at {caps.LIST_MAX_ENTRIES} entries; list a subdirectory "
                    "or use fs_glob]"
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
            if seen >= _WALK_MAX or len(found) >= caps.GLOB_MAX_MATCHES:
                found.append(f"[stopped after {len(found)} matches; narrow the pattern]")
                break
            rel = entry.relative_to(base).as_posix()
            if matcher.match(rel):
                found.append(self.shown(entry) + ("/" if is_dir else ""))
        if not found:
            return f"no paths match '{pattern}' under '{self.shown(base)}'"
        return "\n".join(found)

    def grep(
        self,
        pattern: str,
        path: str = ".",
        glob: str | None = None,
        ignore_case: bool = False,
        max_matches: int | None = None,
    ) -> str:
        """Lines matching a regular expression, as ``file:line:text``."""
        try:
            regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
        except re.error as exc:
            raise ValueError(
                f"{self.prefix}grep: bad regular expression {pattern!r}: {exc}"
            ) from None
        cap = min(max_matches or caps.GREP_MAX_MATCHES_DEFAULT, caps.GREP_MAX_MATCHES)
        base = self.resolve("grep", path)
        if not base.exists():
            raise self._missing("grep", path)
        name_filter = compile_glob(glob) if glob else None
        files = [base] if base.is_file() else self._grep_files(base, name_filter, glob or "")
        ignored_glob = ""
        if glob and not files and not base.is_file():
            # A glob that keeps no file is most often not a name pattern at all (small
            # models pass "true" or ".*"): search every file, and say so.
            files = self._grep_files(base, None, "")
            ignored_glob = (
                f"[no file name there matches the glob {glob!r}, so every file was searched]"
            )
        notes = [ignored_glob] if ignored_glob else []
        # Small models grep for a name ("\.py$"): say which file names match, too.
        named = [] if base.is_file() else [f for f in files if regex.search(f.name)]
        out: list[str] = []
        hit_files = 0
        for file in files:
            hits = self._grep_file(regex, file, cap - len(out))
            hit_files += bool(hits)
            out.extend(hits)
            if len(out) >= cap:
                out.append(
                    f"[stopped at {cap} matches; narrow the pattern or the path, "
                    f"max_matches goes up to {caps.GREP_MAX_MATCHES}]"
                )
                return "\n".join([*out, *notes])
        if not out:
            where = self.shown(base)
            if base.is_file():  # the word may be written otherwise: the file itself says
                return f"no matches for {pattern!r} in '{where}'; read it to see its text"
            if named:
                notes.append(f"[file names that match it: {self._names(named)}]")
            return "\n".join(
                [
                    f"no matches for {pattern!r} in '{where}' (fs_grep searches the text "
                    "inside files; fs_glob finds files by name)",
                    *notes,
                ]
            )
        if named and len(named) < len(files):
            notes.append(f"[file names that match it too: {self._names(named)}]")
        return "\n".join([*out, f"[{len(out)} matches in {hit_files} files]", *notes])

    def _grep_files(self, base: Path, name_filter: re.Pattern[str] | None, glob: str) -> list[Path]:
        files: list[Path] = []
        for seen, (entry, is_dir) in enumerate(walk(base, _SKIP_DIRS)):
            if seen >= _WALK_MAX:
                break
            if is_dir:
                continue
            rel = entry.relative_to(base).as_posix()
            subject = rel if "/" in glob else entry.name
            if name_filter is not None and not name_filter.match(subject):
                continue
            if self.confined.real_inside(entry):
                files.append(entry)
        return files

    def _grep_file(self, regex: re.Pattern[str], file: Path, room: int) -> list[str]:
        try:
            if file.stat().st_size > caps.GREP_MAX_FILE_BYTES:
                return []
            data = file.read_bytes()
        except OSError:
            return []
        if b"\x00" in data[:_SNIFF]:
            return []
        hits: list[str] = []
        shown = self.shown(file)
        for number, line in enumerate(data.decode("utf-8", errors="replace").split("\n"), 1):
            if regex.search(line):
                hits.append(f"{shown}:{number}:{line.rstrip()[: caps.GREP_LINE_CHARS]}")
                if len(hits) >= room:
                    break
        return hits

    # -- mkdir, delete, diff ---------------------------------------------------------------

    def mkdir(self, path: str) -> str:
        """Create a directory and any missing parents."""
        target = self.resolve("mkdir", path)
        shown = self.shown(target)
        if target.is_dir():
            return f"'{shown}' already exists"
        if target.exists():
            raise FileExistsError(f"{self.prefix}mkdir: '{shown}' exists and is a file")
        try:
            target.mkdir(parents=True)
        except OSError as exc:
            raise OSError(f"{self.prefix}mkdir: cannot create '{shown}': {exc.strerror}") from None
        return f"created directory '{shown}'"

    def delete(self, path: str, recursive: bool = False) -> str:
        """Delete a file, a symlink (not what it points to) or, with ``recursive``, a directory;
        ``before_delete`` is asked first."""
        self.resolve("delete", path)  # refuses symlinks that lead out
        entry = self.resolve("delete", path, follow_final=False)
        if entry == self.confined.root:
            raise PermissionError(
                f"{self.prefix}delete: refusing to delete the sandbox root {self.confined.root}"
            )
        shown = self.shown(entry)
        link, directory = entry.is_symlink(), entry.is_dir()
        if directory and not link and not recursive:
            raise IsADirectoryError(
                f"{self.prefix}delete: '{shown}' is a directory; to delete it and "
                "everything in it, set recursive to true"
            )
        if not (link or entry.exists()):
            raise self._missing("delete", path)
        if self.before_delete is not None:
            self.before_delete(shown, directory and not link)
        try:
            if link:
                entry.unlink()
                return f"deleted symlink '{shown}'"
            if directory:
                count = sum(1 for _ in walk(entry))
                shutil.rmtree(entry)
                return f"deleted directory '{shown}' and the {count} entries in it"
            entry.unlink()
        except OSError as exc:
            raise OSError(f"{self.prefix}delete: cannot delete '{shown}': {exc.strerror}") from None
        return f"deleted '{shown}'"

    def move(self, path: str, destination: str) -> str:
        """Rename or move a file or directory; into ``destination`` when it is a directory.
        An existing file at the destination is not replaced."""
        source = self.resolve("move", path, follow_final=False)
        if has_magic(path) and not source.exists() and not source.is_symlink():
            return self.move_matching(path, destination)
        if source == self.confined.root:
            raise PermissionError(f"{self.prefix}move: refusing to move the sandbox root")
        if not source.exists() and not source.is_symlink():
            raise self._missing("move", path)
        target = self.resolve("move", destination)
        if target.is_dir():
            target = target / source.name
        shown_from, shown_to = self.shown(source), self.shown(target)
        if target.exists() or target.is_symlink():
            raise FileExistsError(
                f"{self.prefix}move: '{shown_to}' already exists; delete it first or choose "
                "another name"
            )
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            source.rename(target)
        except OSError as exc:
            raise OSError(
                f"{self.prefix}move: cannot move '{shown_from}' to '{shown_to}': {exc.strerror}"
            ) from None
        return f"moved '{shown_from}' to '{shown_to}'"

    def move_matching(self, pattern: str, destination: str) -> str:
        """Move every entry ``pattern`` matches: renamed when ``destination`` has as many
        ``*`` (``*.txt`` -> ``*.md``), else into the directory ``destination`` (created when
        missing). Nothing moves unless every entry can."""
        who = f"{self.prefix}move"
        sources = self.matching("move", pattern)
        if not sources:
            raise FileNotFoundError(
                f"{who}: nothing matches '{pattern}' under {self.confined.root}"
            )
        if len(sources) > caps.MOVE_MAX_ENTRIES:
            raise ValueError(
                f"{who}: '{pattern}' matches {len(sources)} entries, over the "
                f"{caps.MOVE_MAX_ENTRIES} one move may take; use a narrower pattern"
            )
        rename = star_rename(os.path.normpath(pattern), os.path.normpath(destination))
        pairs: list[tuple[Path, Path]] = []
        if rename is not None:
            for source in sources:
                renamed = rename(self.shown(source))
                if renamed is None:
                    raise ValueError(f"{who}: cannot rename '{self.shown(source)}' by the pattern")
                pairs.append((source, self.resolve("move", renamed, follow_final=False)))
        elif has_magic(destination):
            raise ValueError(
                f"{who}: to rename by a pattern, use '*' as many times in destination as in "
                f"path, and no other pattern characters ('*.txt' to '*.md'); or give a "
                f"directory to move them into"
            )
        else:
            folder = self.resolve("move", destination)
            if folder.exists() and not folder.is_dir():
                raise NotADirectoryError(
                    f"{who}: '{destination}' is a file; to move the {len(sources)} entries "
                    f"'{pattern}' matches, give a directory"
                )
            pairs = [(source, folder / source.name) for source in sources if source != folder]
        self._check_moves(who, pairs)
        done: list[str] = []
        for source, target in pairs:
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                source.rename(target)
            except OSError as exc:
                done.append(f"stopped: cannot move '{self.shown(source)}': {exc.strerror}")
                break
            done.append(f"'{self.shown(source)}' to '{self.shown(target)}'")
        return f"moved {len(pairs)} entries matching '{pattern}':\n" + "\n".join(done)

    def _check_moves(self, who: str, pairs: list[tuple[Path, Path]]) -> None:
        """Refuse moves that would replace an entry, land two entries on one name, or put a
        directory inside itself, before any of them is made."""
        targets: set[Path] = set()
        for source, target in pairs:
            shown_to = self.shown(target)
            if source == self.confined.root:
                raise PermissionError(f"{who}: refusing to move the sandbox root")
            if target in targets:
                raise FileExistsError(f"{who}: two entries would both become '{shown_to}'")
            if target.exists() or target.is_symlink():
                raise FileExistsError(
                    f"{who}: '{shown_to}' already exists; nothing was moved. Delete it first "
                    "or choose another name"
                )
            if target.is_relative_to(source):
                raise ValueError(f"{who}: cannot move '{self.shown(source)}' into itself")
            targets.add(target)

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


def _closest_line(text: str, old: str) -> tuple[int, str] | None:
    """The line of ``text`` most like the first line of ``old`` that is not blank, with its
    number, when one is close enough to be what was meant."""
    import difflib

    wanted = next((line.strip() for line in old.splitlines() if line.strip()), "")
    if not wanted:
        return None
    lines = text.splitlines()
    stripped = [line.strip() for line in lines]
    close = difflib.get_close_matches(wanted, stripped, n=1, cutoff=0.6)
    if not close:
        return None
    number = stripped.index(close[0])
    return number + 1, lines[number].strip()
