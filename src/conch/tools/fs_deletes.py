"""Deleting: one entry, or every entry a pattern matches (``fs_delete`` with ``"*.tmp"``);
never the sandbox root, a directory above it, or the working directory.

Small models asked to "delete the .tmp files here" often name the directory they were told
about (the sandbox root) instead of the files. That is refused, and the refusal says which call
deletes only the files the request names (a pattern, matched here against the files there, so
the model can copy the call), or, when the request names none of them, to delete nothing; what
the directory holds is not listed then (a model shown it deleted one of the files).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from conch.tools import caps
from conch.tools.fs_base import SandboxFiles
from conch.tools.globs import WALK_MAX, compile_glob, has_magic, walk

SHOW_KINDS = 6  # at most this many of the patterns a request names are offered
_QUOTES = "'\"`“”‘’()[],;:!"
_EVERYTHING = frozenset({"*", "**", "*.*"})  # a pattern of only these takes everything
_SUFFIX = re.compile(r"^\.[A-Za-z0-9_-]{1,10}$")


def delete(files: SandboxFiles, path: str, recursive: bool = False) -> str:
    """Delete a file, a symlink (not what it points to) or, with ``recursive``, a directory;
    a pattern deletes every entry it matches. ``before_delete`` is asked first."""
    refuse_protected(files, path)
    files.resolve("delete", path)  # refuses symlinks that lead out
    entry = files.resolve("delete", path, follow_final=False)
    if has_magic(path) and not entry.exists() and not entry.is_symlink():
        return delete_matching(files, path, recursive)
    shown = files.shown(entry)
    link, directory = entry.is_symlink(), entry.is_dir()
    if directory and not link and not recursive:
        raise IsADirectoryError(
            f"{files.prefix}delete: '{shown}' is a directory; to delete it and "
            "everything in it, set recursive to true"
        )
    if not (link or entry.exists()):
        raise _missing(files, path)
    if files.before_delete is not None:
        files.before_delete([shown], directory and not link)
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
        raise OSError(f"{files.prefix}delete: cannot delete '{shown}': {exc.strerror}") from None
    return f"deleted '{shown}'"


def _missing(files: SandboxFiles, path: str) -> FileNotFoundError:
    """No such file: with the call that deletes what the request names, where it names any."""
    missing = files.missing("delete", path)
    hint = offer(files, files.confined.root)
    return FileNotFoundError(f"{missing}. {hint}") if hint else missing


def delete_matching(files: SandboxFiles, pattern: str, recursive: bool) -> str:
    """Delete every entry ``pattern`` matches, after one question for all of them. Nothing
    is deleted unless every entry can be: a directory among them needs ``recursive``."""
    who = f"{files.prefix}delete"
    entries: list[Path] = []  # what the pattern matches, less what is inside a match
    folders: set[Path] = set()
    for entry in files.matching("delete", pattern):  # sorted: a directory before its entries
        if not any(parent in folders for parent in entry.parents):
            entries.append(entry)
            if entry.is_dir() and not entry.is_symlink():
                folders.add(entry)
    if not entries:
        hint = offer(files, files.confined.root) or (
            f"Use {files.tool('list')} to see what is there."
        )
        raise FileNotFoundError(
            f"{who}: nothing matches '{pattern}' under {files.confined.root}; nothing was "
            f"deleted. {hint}"
        )
    if len(entries) > caps.DELETE_MAX_ENTRIES:
        raise ValueError(
            f"{who}: '{pattern}' matches {len(entries)} entries, over the "
            f"{caps.DELETE_MAX_ENTRIES} one delete may take; use a narrower pattern"
        )
    if folders and not recursive:
        raise IsADirectoryError(
            f"{who}: '{pattern}' matches the directories {files.names(sorted(folders))}; nothing "
            "was deleted. To delete them and everything in them too, set recursive to true; "
            "to delete only files, use a pattern that matches only files"
        )
    shown = [files.shown(e) for e in entries]
    if files.before_delete is not None:
        files.before_delete(shown, bool(folders))
    done: list[str] = []
    for entry, name in zip(entries, shown, strict=True):
        try:
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        except OSError as exc:
            return (
                f"deleted {len(done)} of {len(entries)} entries matching '{pattern}': "
                f"{', '.join(done) or 'none'}\nstopped: cannot delete '{name}': {exc.strerror}"
            )
        done.append(name + ("/" if entry in folders else ""))
    entries_word = "entry" if len(done) == 1 else "entries"
    return f"deleted {len(done)} {entries_word} matching '{pattern}': {', '.join(done)}"


# -- what must never be deleted ---------------------------------------------------------------


def refuse_protected(files: SandboxFiles, path: str) -> None:
    """Refuse a delete of the sandbox root, of a directory above it, or of the working
    directory (or one above it), and a pattern that takes everything in the root, with the
    call that deletes only the files the request names, or else what the directory holds."""
    named = _named(files, path)
    if named is None and _everything(path):
        named = files.confined.root, f"everything in the sandbox root ('{path}')"
    if named is None:
        return
    target, what = named
    folder = target if files.confined.contains(target) else files.confined.root
    raise PermissionError(
        f"{files.prefix}delete: refusing to delete {what}; nothing was deleted. "
        + _suggestion(files, folder)
    )


def _everything(pattern: str) -> bool:
    """Whether ``pattern`` matches every entry of the root by its form (``*``, ``**/*``)."""
    parts = [p for p in Path(pattern).parts if p != "."]
    return bool(parts) and all(p in _EVERYTHING for p in parts)


def _named(files: SandboxFiles, path: str) -> tuple[Path, str] | None:
    """The directory ``path`` names and what it is, when it is one that must not go."""
    root = files.confined.root
    candidates = [Path(path) if Path(path).is_absolute() else root / (path or ".")]
    if path and not Path(path).is_absolute():
        candidates.append(Path("/" + path))  # an absolute path that lost its leading "/"
    try:
        cwd: Path | None = Path.cwd().resolve()
    except OSError:
        cwd = None
    for candidate in candidates:
        target = _real(candidate)
        if target is None:
            continue
        if target == root:
            return target, "the sandbox root, the whole working directory"
        if root.is_relative_to(target):
            return target, f"{target}, which holds the sandbox root {root}"
        if cwd is not None and cwd.is_relative_to(target) and files.confined.contains(target):
            where = (
                "the working directory" if cwd == target else "which holds the working directory"
            )
            return target, f"'{files.shown(target)}', {where}"
    return None


def _real(candidate: Path) -> Path | None:
    """``candidate`` with symlinks resolved, when it is an existing directory."""
    try:
        real = Path(os.path.realpath(candidate))
    except (OSError, ValueError):
        return None
    return real if real.is_dir() else None


def _suggestion(files: SandboxFiles, folder: Path) -> str:
    """The delete call, with a pattern, that takes only the files of ``folder`` the request
    names; where it names none there, to delete nothing."""
    entries = sorted(folder.iterdir())
    if not entries:
        return f"'{files.shown(folder)}' is empty."
    offered = offer(files, folder, entries)
    if offered:
        return offered
    # What the folder holds is not listed: shown its files, a small model took one of them
    # for what the request named and deleted it, when the request asked for everything.
    return (
        f"The request names none of the {len(entries)} entries in '{files.shown(folder)}' by "
        "name or kind. Do not delete anything: tell the user this was refused and why; files "
        'are deleted only when the request names them (a path, or a kind like "*.log").'
    )


def offer(files: SandboxFiles, folder: Path, entries: list[Path] | None = None) -> str:
    """``Next, call fs_delete with {"path": "*.tmp"}: ...``: the call that deletes the files
    of ``folder`` the request names, or "" when it names none there."""
    if entries is None:
        entries = sorted(folder.iterdir())
    base = "" if folder == files.confined.root else files.shown(folder) + "/"
    wanted = request_patterns(files.request() if files.request else None, entries)
    offers = [(base + p, _matches(folder, p)) for p in wanted]
    offers = [(p, m) for p, m in offers if m]
    if not offers:
        return ""
    calls = " or with ".join(
        f"{_call(files, p)}: it deletes only {files.names(m)}" for p, m in offers[:SHOW_KINDS]
    )
    return f"Next, call {files.tool('delete')} with {calls}, the files the request names."


def request_patterns(request: str | None, entries: list[Path]) -> list[str]:
    """The patterns a request names for the ``entries`` of one directory: glob words
    (``*.tmp``), suffixes (``.tmp``) and kinds of file ("the tmp files", "log files") whose
    suffix some entry has; each as a pattern for that directory (``*.tmp``)."""
    if not request:
        return []
    suffixes = {e.suffix.lower() for e in entries if e.suffix}
    words = [w.strip(_QUOTES).rstrip(".?!") for w in request.split()]
    found: list[str] = []
    for index, word in enumerate(words):
        if not word:
            continue
        if has_magic(word) and "/" not in word:
            if not _everything(word):
                found.append(word)
            continue
        lowered = word.lower()
        if _SUFFIX.match(lowered):
            found.append("*" + lowered)
            continue
        after = words[index + 1].lower() if index + 1 < len(words) else ""
        if f".{lowered}" in suffixes and after.startswith("file"):
            found.append(f"*.{lowered}")
    return list(dict.fromkeys(found))


def _matches(folder: Path, pattern: str) -> list[Path]:
    """The entries of ``folder`` whose names match ``pattern``."""
    matcher = compile_glob(pattern)
    return [e for e in sorted(folder.iterdir())[:WALK_MAX] if matcher.match(e.name)]


def _call(files: SandboxFiles, path: str) -> str:
    """The delete call, as JSON, that deletes ``path``."""
    call: dict[str, str] = {"path": path}
    if files.unified:  # the one fs tool names its action
        call = {"action": "delete", **call}
    return json.dumps(call)
