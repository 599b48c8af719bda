"""Whether an in-place edit the model ran (``sed -i``, ``perl -pi``, ``awk -i inplace``)
changed anything.

A small model writes ``sed -i 's/debug = true/debug = false/' settings.json`` for a JSON file
that holds ``"debug": true``: the pattern matches nothing, sed exits 0, prints nothing, and
the model takes the silence for success. The ``bash`` tool keeps the content of the files the
command's in-place edits are given before it runs, and when none of them changed says so in
the result.
"""

from __future__ import annotations

from pathlib import Path

from conch.command.judge import in_place_edit
from conch.policy.commands import analyse

_MAX_FILES = 10
_MAX_BYTES = 1 << 20


_EDITORS = frozenset({"sed", "gsed", "perl", "awk", "gawk"})
_MOVES = frozenset({"cd", "pushd", "popd"})


def snapshot(command: str, cwd: Path) -> dict[str, bytes]:
    """The content of each small regular file under ``cwd`` that an in-place edit in
    ``command`` is given; empty when it has none, or when it changes directory first (the
    names would be read from the wrong place)."""
    if not in_place_edit(command):
        return {}
    try:
        invocations = analyse(command).invocations
    except Exception:  # a command conch cannot read gets no note, and still runs
        return {}
    if any(inv.name in _MOVES for inv in invocations):
        return {}
    words = [
        arg.text
        for inv in invocations
        if inv.name in _EDITORS
        and in_place_edit(" ".join([inv.name, *(t or "" for t in inv.texts())]))
        for arg in inv.args
        if arg.text and not arg.text.startswith("-")
    ]
    base = cwd.resolve()
    kept: dict[str, bytes] = {}
    for word in dict.fromkeys(words):
        if len(kept) == _MAX_FILES:
            break
        try:
            path = (cwd / word).resolve()
            if not path.is_relative_to(base) or not path.is_file():
                continue
            if path.stat().st_size <= _MAX_BYTES:
                kept[word] = path.read_bytes()
        except (OSError, ValueError, RuntimeError):  # RuntimeError: a symlink loop
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
