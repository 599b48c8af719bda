"""Files a task asks the agent to produce, and whether they exist yet.

Small models often do the work in their head and answer in words ("7") when the user asked
for the result in a file ("... and write the number to count.txt"). The agent loop checks
before it accepts an answer: when the instruction asks for something to be written, saved,
created, renamed, moved or copied, every file name in it that did not exist when the turn
began is taken for a file the user expects, and an answer given while one of them is still
missing, or is there but empty, is held back once, with a note naming them
(``Limits.max_output_checks``). Each look is told as a ``Checked`` event per file
(``checks``), so a front end can show what was found.

A file name here is a word with an extension (``count.txt``, ``docs/INDEX.md``), not a
pattern (``*.txt``) or a URL; paths are read relative to the sandbox root.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from conch.agent.events import Checked

# Verbs that ask for a file to come into being.
_PRODUCING = re.compile(
    r"\b(write|writes|written|save|saved|create|created|put|store|generate|produce|make|"
    r"rename|renamed|move|moved|copy|copied|record|output|export|convert|list them)\b",
    re.IGNORECASE,
)
# A relative path whose last part has an extension with a letter in it.
_FILE = re.compile(
    r"(?<![\w/.*:~$-])((?:[\w-][\w.-]*/)*[\w-][\w-]*(?:\.[\w-]+)*\.(?=[\w-]*[A-Za-z])[\w-]{1,10})"
    r"(?![\w/*])"
)
_MAX_NAMES = 8
# How far ``_names_near`` looks for a bare file name.
_DEPTH = 4
_ENTRIES = 5000
# Files up to this size have their lines counted for ``checks``; larger ones, their bytes.
_COUNTED = 1 << 20
ASKED_AGAIN = "asked the model once more"


def expected_outputs(instruction: str, root: Path) -> tuple[str, ...]:
    """The files ``instruction`` asks for that do not exist under ``root`` now (in the
    order named, at most eight); none when it asks for nothing to be written."""
    if not _PRODUCING.search(instruction):
        return ()
    names: list[str] = []
    for match in _FILE.finditer(instruction):
        name = match.group(1).rstrip(".")
        if name in names or name.startswith(("../", "/")):
            continue
        if not _exists(root, name):
            names.append(name)
        if len(names) == _MAX_NAMES:
            break
    return tuple(names)


def still_missing(names: tuple[str, ...], root: Path) -> tuple[str, ...]:
    """Those of ``names`` that do not exist under ``root``."""
    return tuple(name for name in names if not _exists(root, name))


def still_empty(names: tuple[str, ...], root: Path) -> tuple[str, ...]:
    """Those of ``names`` that are empty files under ``root`` (a command whose output went
    to the file printed nothing, or the file was created and never written)."""
    empty: list[str] = []
    for name in names:
        try:
            path = root / name
            if path.is_file() and not path.is_symlink() and path.stat().st_size == 0:
                empty.append(name)
        except (OSError, ValueError):
            continue
    return tuple(empty)


def checks(names: tuple[str, ...], root: Path, *, held: bool = False) -> tuple[Checked, ...]:
    """One ``Checked`` per file of ``names``: there (with its lines), missing or empty.
    ``held``: the answer was held back for the ones found wanting, and their detail says
    the model was asked once more."""
    missing = still_missing(names, root)
    empty = still_empty(names, root)
    again = f": {ASKED_AGAIN}" if held else ""
    found: list[Checked] = []
    for name in names:
        if name in missing:
            found.append(Checked(name, False, f"is missing{again}"))
        elif name in empty:
            found.append(Checked(name, False, f"is empty{again}"))
        else:
            found.append(Checked(name, True, _described(root / name)))
    return tuple(found)


def _described(path: Path) -> str:
    """``exists, 3 lines`` (a text file), ``exists, 2048 bytes`` (a binary or large one), or
    ``exists`` (found elsewhere, a directory, a link: nothing is read through a link)."""
    try:
        if path.is_symlink() or not path.is_file():
            return "exists"
        size = path.stat().st_size
        if size > _COUNTED:
            return f"exists, {size} bytes"
        data = path.read_bytes()
    except (OSError, ValueError):
        return "exists"
    if b"\0" in data:
        return f"exists, {size} bytes"
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    return f"exists, {lines} line{'' if lines == 1 else 's'}"


def empty_note(names: tuple[str, ...]) -> str:
    """What the model is told when it answers while files the task asks for are empty."""
    listed = ", ".join(names)
    return (
        f"Check the work before answering: {listed} "
        f"{'is' if len(names) == 1 else 'are'} empty. If that is not the right result, find "
        "out why (read what the command printed, or run it again without the redirection) "
        "and fix it; if it is right, answer and say so."
    )


def missing_note(names: tuple[str, ...]) -> str:
    """What the model is told when it answers before writing ``names``."""
    listed = ", ".join(names)
    first = names[0]
    return (
        f"The task is not done: it asks for {listed}, and "
        f"{'it does' if len(names) == 1 else 'they do'} not exist yet. Write "
        f"{'it' if len(names) == 1 else 'them'} now, for example "
        f'{{"tool": "fs_write", "arguments": {{"path": "{first}", "content": "..."}}}} '
        "(or rename, move or run what produces it), then answer."
    )


def _exists(root: Path, name: str) -> bool:
    """Whether ``name`` is there: at that path under ``root``, or (a bare file name, as in
    "IMG_1.jpg becomes holiday_1.jpg" about files in a subdirectory) anywhere near it."""
    try:
        if (root / name).exists():
            return True
    except (OSError, ValueError):
        return False
    return "/" not in name and name in _names_near(root)


def _names_near(root: Path) -> set[str]:
    """The names of the entries under ``root``, down to ``_DEPTH`` levels and no more than
    ``_ENTRIES`` of them, hidden directories skipped: enough for a project, bounded in a
    home directory."""
    names: set[str] = set()
    level = [root]
    seen = 0
    for _ in range(_DEPTH):
        below: list[Path] = []
        for directory in level:
            try:
                entries = list(os.scandir(directory))
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen > _ENTRIES:
                    return names
                names.add(entry.name)
                if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                    below.append(Path(entry.path))
        level = below
    return names
