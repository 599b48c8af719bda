"""Files a reply proposes to write, shown as a unified diff against the disk before anything
is written.

The model proposes a file as it suggests a command: a line ``FILE: path`` and, after it,
the whole new file in a code block (``FILE_PROMPT`` says so in the system prompt). A block
whose label names the file (```` ```python src/app.py ````, ```` ```src/app.py ````,
```` ```python:src/app.py ````, ```` ```js title="app.js" ````) or that follows a line
holding only a path (```` `src/app.py`: ````, ``**src/app.py**``) counts too.
``proposed_files`` finds them; ``change_for`` reads the file on disk and makes the
``Change``: the diff, how many lines it adds and removes, and what stands against writing
it, for the user to judge:

- ``problem``: it cannot be written at all: the path leaves the shell's directory (``..``,
  an absolute path elsewhere, a symbolic link out), lies in ``.git``, names a directory, or
  the file on disk is binary or too large to compare;
- ``partial``: the proposal looks like a snippet rather than the whole file (a line such as
  ``# ... rest of the file unchanged``, or far shorter than the file it replaces), so
  writing it would lose the rest.

Writing is the caller's decision, after the user said yes: ``apply_change`` writes the new
text atomically, and only when the file is still as it was when the diff was made.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from conch.errors import ConchError
from conch.storage.files import atomic_write_text
from conch.validate.extract import fences

__all__ = [
    "FILE",
    "FILE_PROMPT",
    "MAX_BYTES",
    "Change",
    "ChangeError",
    "Proposed",
    "apply_change",
    "change_for",
    "changes",
    "names_file",
    "proposed_files",
]

FILE = "FILE: "
FILE_PROMPT = (
    "To change or create a file, write a line of its own beginning with exactly "
    '"FILE: " and the path, then the whole new file in one code block.'
)
#: The largest file compared (bytes); a larger one is a ``problem``.
MAX_BYTES = 512 * 1024
#: A proposal this much shorter than the file it replaces (in lines) looks like a snippet.
_SHORTER = 0.5
_MIN_LINES = 12

_FILE_LINE = re.compile(r"^\s*FILE:\s*(?P<path>.+?)\s*$")
# A line that is only a path, perhaps in backticks or bold, perhaps ending with a colon.
_PATH_LINE = re.compile(r"^\s*(?:\*\*|`)?(?P<path>[\w./-]+)(?:\*\*|`)?\s*:?\s*$")
_PATH = re.compile(r"^(?:[\w.-]+/)*[\w.-]*\.[A-Za-z]\w{0,9}$")
# A line standing for elided text: a comment that starts with an ellipsis (``# ...``,
# ``// ... existing code``), an ellipsis followed by words, or words that say so. (A bare
# ``...`` is left alone: in Python it is code.)
_ELISION = re.compile(
    r"^\s*(?:#|//|/\*|<!--|--|;)\s*(?:\.\.\.|…)"
    r"|^\s*(?:\.\.\.|…)\s*[A-Za-z]"
    r"|\b(?:rest of (?:the )?(?:file|code|class|function|module)|existing code"
    r"|remains? unchanged|unchanged code|same as before)\b",
    re.I,
)


class ChangeError(ConchError):
    """A proposed change cannot be written (names the file and why)."""


@dataclass(frozen=True, slots=True)
class Proposed:
    """A file a reply proposes: its ``path`` as written, the new ``content``, the code
    block's language label and where the block is in the reply (``span``)."""

    path: str
    content: str
    lang: str = ""
    span: tuple[int, int] = (0, 0)


@dataclass(frozen=True, slots=True)
class Change:
    """A proposed file against the disk: ``target`` (resolved), the text ``before`` (None:
    a new file) and ``after``, the unified ``diff``, the lines ``added`` and ``removed``,
    ``partial`` (why it looks like a snippet; empty when it looks whole) and ``problem``
    (why it cannot be written; empty when it can)."""

    path: str
    target: Path
    before: str | None
    after: str
    diff: str
    added: int = 0
    removed: int = 0
    partial: str = ""
    problem: str = ""

    @property
    def new(self) -> bool:
        return self.before is None

    @property
    def unchanged(self) -> bool:
        return self.before == self.after

    @property
    def summary(self) -> str:
        """One line: ``src/app.py: +3 -1``, ``notes.md: new file, 12 lines``."""
        if self.problem:
            return f"{self.path}: {self.problem}"
        if self.unchanged:
            return f"{self.path}: unchanged"
        if self.new:
            return f"{self.path}: new file, {self.added} line{'' if self.added == 1 else 's'}"
        note = f" ({self.partial})" if self.partial else ""
        return f"{self.path}: +{self.added} -{self.removed}{note}"


def proposed_files(reply: str) -> list[Proposed]:
    """The files ``reply`` proposes, in order: code blocks after a ``FILE:`` line or a line
    that is only a path, or whose label names a file. A path proposed twice keeps its last
    block."""
    found: dict[str, Proposed] = {}
    for fence in fences(reply):
        if not fence.closed:  # cut short: writing it would lose the rest of the file
            continue
        path = _named_before(reply[: fence.span[0]]) or _named_in(fence.label)
        if path is None:
            continue
        lang = "" if fence.lang == path or _PATH.match(fence.lang) else fence.lang
        found.pop(path, None)
        found[path] = Proposed(path, fence.body, lang, fence.span)
    return list(found.values())


def change_for(proposed: Proposed, cwd: str | Path, max_bytes: int = MAX_BYTES) -> Change:
    """The ``Change`` that writing ``proposed`` in the shell's directory ``cwd`` would
    make."""
    root = Path(os.path.realpath(cwd))
    target = Path(os.path.realpath(root / os.path.expanduser(proposed.path)))
    after = proposed.content

    def refused(problem: str, before: str | None = None) -> Change:
        return Change(proposed.path, target, before, after, "", problem=problem)

    if not target.is_relative_to(root) or target == root:
        return refused("outside the shell's directory; not written")
    if ".git" in target.relative_to(root).parts:
        return refused("inside .git; not written")
    if target.is_dir():
        return refused("a directory; not written")
    before: str | None = None
    if target.exists():
        try:
            data = target.read_bytes()
        except OSError as exc:
            return refused(f"cannot be read: {exc.strerror or exc}")
        if len(data) > max_bytes:
            return refused(f"larger than {max_bytes // 1024} KiB; not compared")
        if b"\0" in data:
            return refused("a binary file; not written")
        before = data.decode("utf-8", errors="replace")
    diff, added, removed = _diff(proposed.path, before, after)
    partial = _partial(before, after, removed)
    return Change(proposed.path, target, before, after, diff, added, removed, partial)


def changes(reply: str, cwd: str | Path) -> list[Change]:
    """The ``Change`` of every file ``reply`` proposes."""
    return [change_for(proposed, cwd) for proposed in proposed_files(reply)]


def apply_change(change: Change) -> None:
    """Write ``change`` (after the user agreed to it): atomically, keeping the file's mode.
    ChangeError when it has a ``problem``, or the file is no longer as the diff saw it."""
    if change.problem:
        raise ChangeError(f"{change.path}: {change.problem}")
    try:
        now: str | None = change.target.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        now = None
    except OSError as exc:
        raise ChangeError(f"{change.path}: cannot be read: {exc.strerror or exc}") from None
    if now != change.before:
        raise ChangeError(f"{change.path} changed since the diff was made; not written")
    try:
        atomic_write_text(change.target, change.after)
    except OSError as exc:
        raise ChangeError(f"{change.path}: cannot be written: {exc.strerror or exc}") from None


def _named_before(text: str) -> str | None:
    """The path of a ``FILE:`` line or a path-only line just before a block (one blank
    line between allowed)."""
    lines = text.rstrip("\n").split("\n")[-2:]
    for line in reversed(lines):
        if not line.strip():
            continue
        match = _FILE_LINE.match(line)
        if match:
            path = match.group("path").strip("`*\"'")
            return path or None
        match = _PATH_LINE.match(line)
        if match and _PATH.match(match.group("path")):
            return match.group("path")
        return None
    return None


def names_file(info: str) -> bool:
    """Whether a code block's label ``info`` names a file (``python src/app.py``)."""
    return _named_in(info) is not None


def _named_in(info: str) -> str | None:
    """A path in a code block's label: ``src/app.py``, ``python src/app.py``,
    ``python:src/app.py``, ``js title="app.js"``."""
    for word in info.replace(":", " ").split():
        value = word.split("=", 1)[-1].strip("\"'")
        if _PATH.match(value):
            return value
    return None


def _diff(path: str, before: str | None, after: str) -> tuple[str, int, int]:
    """The unified diff of ``before`` (None: no file) and ``after``, and the lines it adds
    and removes."""
    old = [] if before is None else before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    source = "/dev/null" if before is None else f"a/{path}"
    lines = list(difflib.unified_diff(old, new, source, f"b/{path}"))
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    text = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return text, added, removed


def _partial(before: str | None, after: str, removed: int) -> str:
    """Why ``after`` looks like a snippet rather than the whole file; empty when it does
    not."""
    elided = next((ln.strip() for ln in after.split("\n") if _ELISION.search(ln)), None)
    if elided is not None:
        return f"it leaves text out ({elided[:40]!r}); it may be a snippet, not the whole file"
    if before is None:
        return ""
    old, new = len(before.splitlines()), len(after.splitlines())
    if old >= _MIN_LINES and new < old * _SHORTER and removed > old * _SHORTER:
        return f"it replaces {old} lines with {new}; it may be a snippet, not the whole file"
    return ""
