"""What ``conch shell`` shows of a model's reply: the reply without the command output the
model invented.

A small model that suggests a command often goes on to write what the command would print,
imitating the ``[exec output]`` blocks it is shown (``CMD: ls logs`` / ``exit code: 0`` /
a listing), or a terminal session, or a code block of "output". None of it has run, so none
of it is shown, stored in the conversation or sent back to the model. ``ReplyFilter`` reads
the reply line by line as it streams and leaves out:

1. After a ``CMD:`` line, the lines that follow it, blank lines included, up to the first
   line that reads as a sentence of prose (a capitalised first word, three words or more,
   ending with ``.``, ``!``, ``?`` or ``:``), the next ``CMD:`` line or a code block.
2. A line ``exit code: N`` (how conch shows a command that ran) and every line after it up to
   a blank line; then as after a ``CMD:`` line.
3. The lines after a prompt line (``$ ls``, ``user@host:~$ ls``) outside a code block, up to a
   blank line; then as after a ``CMD:`` line. The prompt line itself stays.
4. In a code block that is a terminal session (``console``, or lines starting with ``$ ``),
   the lines that are not prompts. After a suggested command, a code block that is not shell
   commands is left out whole, whatever its language.
5. A line ending with ``:`` that introduces what is left out (``This will print:``).
6. A ``CMD:`` line that repeats a command the model was just shown running, followed by
   made-up output: a replay of the transcript, left out with its output.

A file the reply proposes (a ``FILE: path`` line, then its code block; or a block whose
label names a file: ``conch.shell.diffs``) is not output: it is shown whole wherever it
comes. Code blocks are shown when they close, other lines when they end.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Container
from dataclasses import dataclass
from enum import Enum

from conch.shell.context import CMD, PROMPT, block_commands, is_transcript
from conch.shell.diffs import names_file
from conch.validate.extract import Fence, clean_command, fence_opening

__all__ = ["Cleaned", "ReplyFilter", "clean_reply"]

_EXIT_LINE = re.compile(r"^\s*exit code: -?\d+\s*$", re.IGNORECASE)
_PROMPT_LINE = re.compile(r"^\s*(?:\$|[\w.-]+@[\w.-]+:\S*[$#]) \S")
_CONTINUATION = "> "
_FILE_LINE = re.compile(r"^\s*FILE:\s*\S")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_FIRST_WORD = re.compile(r"[A-Z][a-z']*[,:]?")
_ALPHABETIC = re.compile(r"[A-Za-z',;:.!?()-]+")


@dataclass(frozen=True, slots=True)
class Cleaned:
    """A reply as shown: its ``text``, and how many non-blank lines were ``dropped``."""

    text: str
    dropped: int


def clean_reply(
    text: str, ran: Collection[str] = (), known: Container[str] | None = None
) -> Cleaned:
    """``text`` without the command output the model invented (``ReplyFilter``)."""
    reply = ReplyFilter(ran, known)
    reply.feed(text)
    reply.end()
    return Cleaned(reply.text, reply.dropped)


class _Mode(Enum):
    TEXT = "text"  # prose: kept
    OUTPUT = "output"  # made-up output up to a blank line: left out
    AFTER = "after"  # after a command: left out up to a sentence, a command or a code block


class ReplyFilter:
    """Reads a reply as it streams (``feed``, then ``end``) and returns what to show of it.

    ``ran``: the commands the model was shown running in this turn (for rule 6);
    ``known``: the command names that make an unlabelled code block commands
    (``conch.shell.route.known_commands``; by default looked up on PATH when needed).
    """

    def __init__(self, ran: Collection[str] = (), known: Container[str] | None = None) -> None:
        self._ran = frozenset(_normal(command) for command in ran)
        self._known = known
        self._kept: list[str] = []  # what was shown
        self._new: list[str] = []  # shown since the last ``feed``
        self._partial = ""  # a line not ended yet
        self._mode = _Mode.TEXT
        self._fence: list[str] | None = None  # an open code block, its opening line first
        self._opening = Fence("")  # the fence that opened it
        self._held: list[str] = []  # a line ending with ':', waiting for what it introduces
        self._replay: str | None = None  # a CMD line repeating a command that ran
        self._blanks = 0  # blank lines waiting for the next line shown
        self._cut = False  # something was left out since the last line shown
        self._shown_any = False
        self._suggested = False
        self._file = False  # a FILE: line came: the next code block is a file's
        self._ended = False
        self.dropped = 0

    @property
    def text(self) -> str:
        """Everything shown so far."""
        return "".join(self._kept)

    def feed(self, text: str) -> str:
        """Take the next piece of the reply; what to show now."""
        self._partial += text
        *lines, self._partial = self._partial.split("\n")
        for line in lines:
            self._line(line)
        return self._take()

    def end(self) -> str:
        """The reply is over; what is left to show (nothing the second time)."""
        if self._ended:
            return ""
        self._ended = True
        if self._partial:
            self._line(self._partial)
            self._partial = ""
        if self._replay is not None:
            self._show(self._replay)
            self._replay = None
        if self._fence is not None:
            self._close_fence()
        self._drop(self._held)
        self._held = []
        return self._take()

    # -- one line ------------------------------------------------------------------------------

    def _line(self, line: str) -> None:
        if self._fence is not None:
            self._fence.append(line)
            if self._opening.closed_by(line):
                self._close_fence()
            return
        if self._replay is not None:
            replay, self._replay = self._replay, None
            if _EXIT_LINE.match(line) or (line.strip() and self._would_drop(line)):
                self._drop([replay])  # the transcript replayed, output and all
                self._mode = _Mode.AFTER
            else:
                self._show(replay)
                self._suggested = True
                self._mode = _Mode.AFTER
        if not line.strip():
            self._blank()
            return
        opening = fence_opening(line)
        if opening is not None:
            self._fence, self._opening = [line], opening
            return
        if _FILE_LINE.match(line):
            self._show(line)
            self._file = True
            self._mode = _Mode.TEXT
            return
        self._file = False
        if line.startswith(CMD):
            self._command(line)
            return
        if _EXIT_LINE.match(line):
            self._drop([*self._held, line])
            self._held = []
            self._mode = _Mode.OUTPUT
            return
        if self._mode is _Mode.OUTPUT:
            self._drop([line])
            return
        after = self._mode is _Mode.AFTER
        if after and not _reads_as_prose(line) and not _PROMPT_LINE.match(line):
            self._drop([line])
            return
        self._mode = _Mode.TEXT
        if _PROMPT_LINE.match(line):
            self._show(line)
            self._mode = _Mode.OUTPUT
        elif line.rstrip().endswith(":"):
            self._held.append(line)  # shown with what it introduces, or left out with it
        else:
            self._show(line)

    def _would_drop(self, line: str) -> bool:
        """Whether a line right after a command would be left out as its output."""
        return not (
            line.startswith(CMD)
            or fence_opening(line) is not None
            or _PROMPT_LINE.match(line)
            or _reads_as_prose(line)
        )

    def _blank(self) -> None:
        if self._mode is _Mode.OUTPUT:
            self._mode = _Mode.AFTER
        if self._held:
            self._held.append("")
        else:
            self._blanks += 1

    def _command(self, line: str) -> None:
        command = clean_command(line[len(CMD) :])
        if command and _normal(command) in self._ran:
            self._release()
            self._replay = line
            return
        self._show(line)
        self._suggested = True
        self._mode = _Mode.AFTER

    def _close_fence(self) -> None:
        assert self._fence is not None
        lines, self._fence = self._fence, None
        opening = self._opening
        lang = opening.lang
        closed = len(lines) > 1 and opening.closed_by(lines[-1])
        body = lines[1:-1] if closed else lines[1:]
        text = "\n".join(body)
        self._mode = _Mode.TEXT
        file, self._file = self._file, False
        if file or names_file(opening.label):
            self._show_block(lines)  # a proposed file, not output
            return
        if is_transcript(lang, text):
            kept, output = _prompt_lines(body)
            if not kept:
                self._drop([*self._held, *lines])
                self._held = []
                return
            self._drop(output)
            self._show_block([lines[0], *kept, *lines[-1:]] if closed else [lines[0], *kept])
            self._suggested = True
            return
        if block_commands(lang, text, self._known) is not None:
            self._show_block(lines)
            self._suggested = True
        elif self._suggested:
            self._drop([*self._held, *lines])
            self._held = []
        else:
            self._show_block(lines)

    # -- showing and leaving out -----------------------------------------------------------

    def _show_block(self, lines: list[str]) -> None:
        for line in lines:
            self._show(line)

    def _show(self, line: str) -> None:
        self._release()
        self._emit(line)

    def _release(self) -> None:
        """Show the lines held for what follows them: what follows is shown."""
        held, self._held = self._held, []
        for line in held:
            if line:
                self._emit(line)
            else:
                self._blanks += 1

    def _emit(self, line: str) -> None:
        blanks = min(self._blanks, 1) if self._cut else self._blanks
        if not self._shown_any:
            blanks = 0
        separator = "\n" if self._shown_any else ""
        self._new.append(separator + "\n" * blanks + line)
        self._blanks = 0
        self._cut = False
        self._shown_any = True

    def _drop(self, lines: list[str]) -> None:
        counted = [line for line in lines if line.strip() and fence_opening(line) is None]
        self.dropped += len(counted)
        if counted:
            self._cut = True

    def _take(self) -> str:
        shown = "".join(self._new)
        self._kept.append(shown)
        self._new = []
        return shown


def _prompt_lines(body: list[str]) -> tuple[list[str], list[str]]:
    """A terminal session's prompt lines (and the lines continuing them), and the rest."""
    kept: list[str] = []
    rest: list[str] = []
    continued = False
    for line in body:
        stripped = line.strip()
        if stripped.startswith(PROMPT) or (continued and stripped.startswith(_CONTINUATION)):
            kept.append(line)
            continued = stripped.endswith("\\")
        else:
            rest.append(line)
            continued = False
    return kept, rest


def _reads_as_prose(line: str) -> bool:
    """A sentence rather than a program's output: a capitalised first word and three words
    or more, ending like a sentence (or five words or more of plain words)."""
    text = _LIST_MARK.sub("", line).strip().strip("*_").strip()
    words = text.split()
    if len(words) < 3 or not _FIRST_WORD.fullmatch(words[0].strip("*_`")):
        return False
    if text.rstrip("*_`)\"'").endswith((".", "!", "?", ":")):
        return True
    return len(words) >= 5 and all(_ALPHABETIC.fullmatch(word.strip("`*_")) for word in words)


def _normal(command: str) -> str:
    return " ".join(command.split())
