"""Moving many entries at once: ``fs_move`` with a pattern (``*.txt`` to ``*.md``, ``*.py`` to
``src``), and the renames ``fs_edit`` offers when it is given a directory.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from conch.tools import caps
from conch.tools.fs_base import SHOW_MATCHES, SandboxFiles
from conch.tools.globs import has_magic, star_rename


def move_matching(files: SandboxFiles, pattern: str, destination: str) -> str:
    """Move every entry ``pattern`` matches: renamed when ``destination`` has as many
    ``*`` (``*.txt`` -> ``*.md``), else into the directory ``destination`` (created when
    missing). Nothing moves unless every entry can."""
    who = f"{files.prefix}move"
    sources = files.matching("move", pattern)
    if not sources:
        raise FileNotFoundError(f"{who}: nothing matches '{pattern}' under {files.confined.root}")
    if len(sources) > caps.MOVE_MAX_ENTRIES:
        raise ValueError(
            f"{who}: '{pattern}' matches {len(sources)} entries, over the "
            f"{caps.MOVE_MAX_ENTRIES} one move may take; use a narrower pattern"
        )
    rename = star_rename(os.path.normpath(pattern), os.path.normpath(destination))
    pairs: list[tuple[Path, Path]] = []
    if rename is not None:
        for source in sources:
            renamed = rename(files.shown(source))
            if renamed is None:
                raise ValueError(f"{who}: cannot rename '{files.shown(source)}' by the pattern")
            pairs.append((source, files.resolve("move", renamed, follow_final=False)))
    elif has_magic(destination):
        raise ValueError(
            f"{who}: to rename by a pattern, use '*' as many times in destination as in "
            f"path, and no other pattern characters ('*.txt' to '*.md'); or give a "
            f"directory to move them into"
        )
    else:
        folder = files.resolve("move", destination)
        if folder.exists() and not folder.is_dir():
            raise NotADirectoryError(
                f"{who}: '{destination}' is a file; to move the {len(sources)} entries "
                f"'{pattern}' matches, give a directory"
            )
        pairs = [(source, folder / source.name) for source in sources if source != folder]
    _check_moves(files, who, pairs)
    files.permit_moves(pairs)
    done: list[str] = []
    stopped = ""
    for source, target in pairs:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            source.rename(target)
        except OSError as exc:
            stopped = f"\nstopped: cannot move '{files.shown(source)}': {exc.strerror}"
            break
        done.append(f"'{files.shown(source)}' to '{files.shown(target)}'")
    moved = f"moved {len(done)} of {len(pairs)}" if stopped else f"moved {len(done)}"
    entries = "entry" if len(pairs) == 1 else "entries"
    return f"{moved} {entries} matching '{pattern}':\n" + "\n".join(done) + stopped


def _check_moves(files: SandboxFiles, who: str, pairs: list[tuple[Path, Path]]) -> None:
    """Refuse moves that would replace an entry, land two entries on one name, or put a
    directory inside itself, before any of them is made."""
    targets: set[Path] = set()
    for source, target in pairs:
        shown_to = files.shown(target)
        if source == files.confined.root:
            raise PermissionError(f"{who}: refusing to move the sandbox root")
        if target in targets:
            raise FileExistsError(f"{who}: two entries would both become '{shown_to}'")
        if target.exists() or target.is_symlink():
            raise FileExistsError(
                f"{who}: '{shown_to}' already exists; nothing was moved. Delete it first "
                "or choose another name"
            )
        if target.is_relative_to(source):
            raise ValueError(f"{who}: cannot move '{files.shown(source)}' into itself")
        targets.add(target)


def renames_in(files: SandboxFiles, folder: Path, old: str, new: str) -> list[str]:
    """fs_move calls, as JSON, that replace ``old`` with ``new`` in the names of the
    entries of ``folder`` (at most ``SHOW_MATCHES``)."""
    entries = [entry for entry in sorted(folder.iterdir()) if old in entry.name]
    return [rename_call(files, entry, old, new) for entry in entries[:SHOW_MATCHES]]


def rename_call(files: SandboxFiles, entry: Path, old: str, new: str) -> str:
    """The fs_move call, as JSON, that replaces ``old`` with ``new`` in ``entry``'s name."""
    renamed = entry.with_name(entry.name.replace(old, new))
    call = {"path": files.shown(entry), "destination": files.shown(renamed)}
    if files.unified:  # the one fs tool names its action
        call = {"action": "move", **call}
    return json.dumps(call)
