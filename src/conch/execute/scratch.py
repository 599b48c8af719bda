"""The throwaway copy of a directory that a scratch dry run writes in (``conch.execute.dryrun``).

``scan_tree`` lists a directory when it is small enough to copy, ``copy_tree`` copies what it
listed (modes and times kept, symlinks as symlinks, special files left out) and
``tree_changes`` says what a command changed in the copy, and ``remove_tree`` deletes the copy
whatever the command did to its permissions.

Held directories. A project directory often holds a virtual environment, ``node_modules`` or a
repository's ``.git``: thousands of files no everyday command writes to, which would put the
whole directory past the copy's limits. Directories with one of the names in ``HELD_NAMES``
are not copied: the scan lists them as ``held``, the copy gets an empty directory in their
place, and the dry run binds the real one there read-only (``held_paths``). A command that
writes into one meets "Read-only file system", as it would with no copy at all.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
from pathlib import Path

SCRATCH_MAX_FILES = 2000
SCRATCH_MAX_BYTES = 32 * 1024 * 1024
HELD_NAMES = frozenset(
    {
        ".git", ".hg", ".svn",
        ".venv", "venv", ".tox", ".nox", "node_modules",
        "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    }
)  # fmt: skip


def scan_tree(
    top: Path,
    max_files: int = SCRATCH_MAX_FILES,
    max_bytes: int = SCRATCH_MAX_BYTES,
    held: frozenset[str] = frozenset(),
) -> list[tuple[str, str]] | None:
    """The entries under ``top`` as (relative path, kind: dir, file, link, held or other),
    parents first, or None when it cannot be read or is too big for a scratch copy (more than
    ``max_files`` entries or ``max_bytes`` of regular files). A directory named in ``held`` is
    one ``held`` entry; what it holds is not listed or counted."""
    entries: list[tuple[str, str]] = []
    size = 0

    def fail(error: OSError) -> None:
        raise error

    try:
        for current, dirs, files in os.walk(top, onerror=fail):
            base = os.path.relpath(current, top)
            kept = [d for d in dirs if d not in held or os.path.islink(os.path.join(current, d))]
            for name in dirs:
                if name not in kept:
                    entries.append((os.path.normpath(os.path.join(base, name)), "held"))
            dirs[:] = kept
            for name in [*dirs, *files]:
                info = os.lstat(os.path.join(current, name))
                relative = os.path.normpath(os.path.join(base, name))
                if stat.S_ISLNK(info.st_mode):
                    kind = "link"
                elif stat.S_ISDIR(info.st_mode):
                    kind = "dir"
                elif stat.S_ISREG(info.st_mode):
                    kind = "file"
                    size += info.st_size
                else:
                    kind = "other"
                entries.append((relative, kind))
                if len(entries) > max_files or size > max_bytes:
                    return None
    except OSError:
        return None
    return entries


def copy_tree(top: Path, copy: Path, entries: list[tuple[str, str]]) -> bool:
    """Copy the scanned ``entries`` of ``top`` to a new ``copy`` (modes and times kept,
    symlinks as symlinks, special files left out); False when something cannot be read."""
    try:
        os.mkdir(copy, 0o700)
        directories = [(top, copy)]
        for relative, kind in entries:
            source, target = top / relative, copy / relative
            if kind in ("dir", "held"):
                os.mkdir(target, 0o700)
                directories.append((source, target))
            elif kind == "file":
                shutil.copy2(source, target, follow_symlinks=False)
            elif kind == "link":
                os.symlink(os.readlink(source), target)
        # a directory's own mode and times last, deepest first (its children are written)
        for source, target in sorted(directories, key=lambda d: len(d[1].parts), reverse=True):
            shutil.copystat(source, target, follow_symlinks=False)
    except OSError:
        return False
    return True


def held_paths(entries: list[tuple[str, str]]) -> list[str]:
    """The relative paths of the ``held`` directories among ``entries``."""
    return [path for path, kind in entries if kind == "held"]


_PATH_PARTS = re.compile(r"[/\s'\"=:;|&<>()`$]+")


def names_held(command: str) -> bool:
    """Whether ``command`` names one of ``HELD_NAMES`` (then nothing is held: a command that
    means to change such a directory is judged on a full copy, or not at all)."""
    return any(part in HELD_NAMES for part in _PATH_PARTS.split(command))


MAX_CHANGES = 20  # the changes a scratch run reports by name; more are counted


def tree_changes(top: Path, copy: Path, entries: list[tuple[str, str]]) -> tuple[str, ...]:
    """What a command changed in ``copy``, the copy of ``top`` made from ``entries``: one line
    per path, ``created``, ``deleted`` or ``changed`` (a file whose kind, size, mode or content
    differs from the original's; a new time on the same content is no change), sorted, at most ``MAX_CHANGES`` and a count of the rest. A copy that
    cannot be read again (grown past the limits, or its permissions taken away) says so in
    one line."""
    held = frozenset(os.path.basename(path) for path, kind in entries if kind == "held")
    after = scan_tree(copy, SCRATCH_MAX_FILES * 2, SCRATCH_MAX_BYTES * 4, held)
    if after is None:
        return ("what it changed could not be read back from the copy",)
    before = dict(entries)
    now = dict(after)
    lines: list[str] = []
    for path in sorted(set(before) | set(now)):
        if path not in now:
            if not _under_one_of(path, before, now):
                lines.append(f"deleted {path}")
        elif path not in before:
            if not _under_one_of(path, now, before):
                lines.append(f"created {path}{'/' if now[path] in ('dir', 'held') else ''}")
        elif before[path] != now[path] or (now[path] == "file" and _differs(top, copy, path)):
            lines.append(f"changed {path}")
    if len(lines) > MAX_CHANGES:
        rest = len(lines) - MAX_CHANGES
        lines = [*lines[:MAX_CHANGES], f"and {rest} more"]
    return tuple(lines)


def _under_one_of(path: str, these: dict[str, str], not_in: dict[str, str]) -> bool:
    """Whether ``path`` lies in a directory of ``these`` that is itself missing from
    ``not_in`` (a created or deleted directory names its contents once, by itself)."""
    parent = os.path.dirname(path)
    while parent:
        if these.get(parent) == "dir" and parent not in not_in:
            return True
        parent = os.path.dirname(parent)
    return False


_COMPARE_BYTES = 1024 * 1024  # files up to this size are compared by content


def _differs(top: Path, copy: Path, path: str) -> bool:
    """Whether the file at ``path`` differs between ``top`` and ``copy``: in size or mode, or,
    when only its time changed, in content (``sed -i`` rewrites a file it leaves as it was).
    A file too big to compare counts as changed when its time did."""
    try:
        old, new = os.lstat(top / path), os.lstat(copy / path)
    except OSError:
        return True
    if (old.st_size, old.st_mode) != (new.st_size, new.st_mode):
        return True
    if old.st_mtime_ns == new.st_mtime_ns:
        return False
    if new.st_size > _COMPARE_BYTES:
        return True
    try:
        return (top / path).read_bytes() != (copy / path).read_bytes()
    except OSError:
        return True


MAX_WRITTEN = 5  # files a scratch run reports the content of
WRITTEN_BYTES = 4096  # the most of each such file it keeps


def written_files(copy: Path, changes: tuple[str, ...]) -> tuple[tuple[str, bytes], ...]:
    """The first ``WRITTEN_BYTES`` of each regular file ``changes`` says a command created or
    changed in ``copy`` (at most ``MAX_WRITTEN``), so what it wrote can be judged after the
    copy is gone."""
    found: list[tuple[str, bytes]] = []
    for line in changes:
        verb, _, path = line.partition(" ")
        if verb not in ("created", "changed") or path.endswith("/"):
            continue
        full = copy / path
        try:
            if not stat.S_ISREG(os.lstat(full).st_mode):
                continue
            with open(full, "rb") as handle:
                found.append((path, handle.read(WRITTEN_BYTES)))
        except OSError:
            continue
        if len(found) == MAX_WRITTEN:
            break
    return tuple(found)


def remove_tree(path: Path) -> None:
    """Delete a scratch copy, even where the command took away permissions."""
    for current, dirs, _files in os.walk(path):
        for name in dirs:
            full = os.path.join(current, name)
            if not os.path.islink(full):
                with contextlib.suppress(OSError):
                    os.chmod(full, 0o700)
    shutil.rmtree(path, ignore_errors=True)
