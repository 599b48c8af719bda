"""Whether an in-place edit the model ran (``sed -i``, ``perl -pi``, ``awk -i inplace``)
changed anything.

A small model writes ``sed -i 's/debug = true/debug = false/' settings.json`` for a JSON file
that holds ``"debug": true``: the pattern matches nothing, sed exits 0, prints nothing, and
the model takes the silence for success. The ``bash`` tool keeps the content of the files the
command names before it runs, and when none of them changed says so in the result.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from conch.command.judge import in_place_edit

_MAX_FILES = 10
_MAX_BYTES = 1 << 20


def snapshot(command: str, cwd: Path) -> dict[str, bytes]:
    """The content of each small regular file under ``cwd`` that ``command`` names, when it
    is an in-place edit; empty otherwise."""
    if not in_place_edit(command):
        return {}
    try:
        words = shlex.split(command)
    except ValueError:
        return {}
    base = cwd.resolve()
    kept: dict[str, bytes] = {}
    for word in dict.fromkeys(words):
        if word.startswith("-") or len(kept) == _MAX_FILES:
            continue
        try:
            path = (cwd / word).resolve()
            if not path.is_relative_to(base) or not path.is_file():
                continue
            if path.stat().st_size <= _MAX_BYTES:
                kept[word] = path.read_bytes()
        except (OSError, ValueError):
            continue
    return kept


def unchanged_note(before: dict[str, bytes], cwd: Path, exit_code: int) -> str:
    """A note when an in-place edit exited 0 and left every file it named as it was."""
    if not before or exit_code != 0:
        return ""
    for word, data in before.items():
        try:
            if (cwd / word).read_bytes() != data:
                return ""
        except OSError:
            return ""
    names = ", ".join(before)
    return (
        f"[the in-place edit changed nothing in {names}: its pattern matched no text there. "
        "Read the file and match the text exactly as it is written, or use fs_edit]"
    )
