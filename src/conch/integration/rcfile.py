"""Putting the marked block into a shell's rc file, and taking it out, without losing a byte
of what else the file holds.

The edits are pure functions over the text (``with_block``, ``without_block``); ``RcFile``
reads and writes the file. A write goes to a temp file beside the file and is renamed into
place (``conch.storage.files.atomic_write_text``), so a crash never leaves half a file; a
symbolic link (a dotfiles manager's) is followed, so the file it points to is changed and
the link stays.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from conch.errors import ConchError, InputError
from conch.integration.shellcode import END, START
from conch.storage.files import atomic_write_text


@dataclass(frozen=True, slots=True)
class Span:
    """Where a block is: the index of its first line (the start marker) and one past its
    last (the end marker)."""

    start: int
    end: int


def find_blocks(lines: list[str], name: str = "the file") -> list[Span]:
    """Every marked block in ``lines`` (each line with its line ending). InputError for a
    start marker without an end marker before the next start (the block's end is unknown,
    so nothing is changed) and for an end marker without a start."""
    spans: list[Span] = []
    opened: int | None = None
    for index, line in enumerate(lines):
        text = line.rstrip()
        if text == START:
            if opened is not None:
                break
            opened = index
        elif text == END:
            if opened is None:
                raise InputError(
                    f"{name} has the line '{END}' without '{START}' before it; "
                    "remove it by hand, then try again"
                )
            spans.append(Span(opened, index + 1))
            opened = None
    if opened is not None:
        raise InputError(
            f"{name} has the line '{START}' (line {opened + 1}) without its end marker "
            f"'{END}'; fix the block by hand, then try again"
        )
    return spans


def with_block(text: str, block: str, name: str = "the file") -> str:
    """``text`` with ``block`` in it: in place of the first marked block (any later ones
    are removed), or at the end, after a newline when the last line has none."""
    lines = text.splitlines(keepends=True)
    spans = find_blocks(lines, name)
    if not spans:
        if text and not text.endswith("\n"):
            text += "\n"
        return text + block
    first = spans[0]
    kept = _drop(lines, spans[1:])
    return "".join(kept[: first.start]) + block + "".join(kept[first.end :])


def without_block(text: str, name: str = "the file") -> str:
    """``text`` without its marked blocks; every other line is kept as it was."""
    lines = text.splitlines(keepends=True)
    return "".join(_drop(lines, find_blocks(lines, name)))


def current_block(text: str, name: str = "the file") -> str | None:
    """The first marked block of ``text``, or None when it has none."""
    lines = text.splitlines(keepends=True)
    spans = find_blocks(lines, name)
    if not spans:
        return None
    return "".join(lines[spans[0].start : spans[0].end])


def _drop(lines: list[str], spans: list[Span]) -> list[str]:
    """``lines`` without the lines of ``spans``; the lines before each span keep their
    positions, so the first span's indices still hold."""
    gone = {index for span in spans for index in range(span.start, span.end)}
    return [line for index, line in enumerate(lines) if index not in gone]


@dataclass(frozen=True, slots=True)
class RcFile:
    """A shell's rc file: ``path`` as the user named it, ``target`` the file it is (links
    followed), ``text`` what it holds now ("" when it does not exist yet)."""

    path: Path
    target: Path
    text: str
    exists: bool

    @classmethod
    def read(cls, path: Path) -> RcFile:
        """The file at ``path``. InputError, in one line, when it cannot be read as text."""
        try:
            target = path.resolve()
            data = target.read_bytes()
        except FileNotFoundError:
            return cls(path, path.resolve(), "", False)
        except IsADirectoryError:
            raise InputError(f"{path} is a directory, not a shell's rc file") from None
        except (OSError, RuntimeError) as exc:  # RuntimeError: a loop of links (3.11)
            raise InputError(
                f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}"
            ) from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(
                f"{path} is not UTF-8 text; add the block by hand "
                "(`conch integration show SHELL` prints it)"
            ) from None
        return cls(path, target, text, True)

    def write(self, text: str) -> None:
        """Replace the file's text with ``text`` atomically (a new file is made readable by
        its owner only). ConchError, in one line, when it cannot be written."""
        try:
            atomic_write_text(self.target, text, None if self.exists else 0o600)
        except OSError as exc:
            raise ConchError(f"cannot write {self.path}: {exc.strerror or exc}") from None
