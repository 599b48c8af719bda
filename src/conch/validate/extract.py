"""Getting one shell command out of a model's reply, whatever its wrapping."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass

from conch.errors import EMPTY_REPLY, ModelOutputError

# A one-line command whose first character is not a backtick, a space or a markdown marker:
# measured on the embedded model, this keeps it from opening a code fence or writing prose
# first, without the escaping damage that wrapping the command in JSON caused.
ONE_LINE_GRAMMAR = "root ::= [^`#\\n ] [^\\n]*"

# A fenced code block, as Markdown has it: a line of three or more backticks and a label
# (``python``, ``python src/app.py``, ``js title="app.js"``: anything but a backtick), the
# body, and a line of as many backticks (or more) that closes it; an unclosed last block runs
# to the end of the text. Every reader of a reply's code blocks pairs fences with this one.
_OPENING = r"^[ \t]*(?P<ticks>`{3,})[ \t]*(?P<label>[^\n`]*?)[ \t]*$"
FENCE = re.compile(
    _OPENING + r"\n(?P<body>.*?)(?P<close>^[ \t]*(?P=ticks)`*[ \t]*$|\Z)", re.S | re.M
)
_OPENING_LINE = re.compile(_OPENING)
_INLINE = re.compile(r"`([^`\n]+)`")
_CMD_LINE = re.compile(r"^\s*(?:CMD|COMMAND|Command)\s*:\s*(.+?)\s*$", re.M)
_PROMPT = re.compile(r"^\s*(?:\$|#|>)\s+")
_PROSE_LEAD = re.compile(
    r"^(?:here(?:'s| is)|to |you can|use |the command|this command|run |try |sure|certainly)",
    re.I,
)
# A sentence's first word: capitalised, maybe with an apostrophe or a comma (``I``, ``Sorry,``).
_SENTENCE_START = re.compile(r"[A-Z][a-z']*,?")
PROSE_REPLY = "the model's reply holds no command (it answered in prose); rephrase the request"
# A typographic dash where an option belongs (``top –n 1``): small models write these, and
# no program accepts them. Only a dash that starts a word is replaced, so text such as
# ``echo "a – b"`` keeps its dash.
_OPTION_DASH = re.compile(r"(?<![^\s])([\u2010-\u2015\u2212]+)(?=[\w-])")
_LONG_DASHES = frozenset("\u2014\u2015")
# The language tags of a fenced block that holds shell commands.
SHELL_LANGS = frozenset(
    {"", "bash", "sh", "shell", "console", "zsh", "shell-session", "terminal", "fish"}
)


@dataclass(frozen=True, slots=True)
class Fence:
    """A fenced code block: its ``label`` (the text after the backticks), ``body``, where
    it is in the text (``span``, ``body_span``), its backticks (``ticks``) and whether a
    fence line ``closed`` it (an unclosed block ran to the end of the text)."""

    label: str
    body: str = ""
    span: tuple[int, int] = (0, 0)
    body_span: tuple[int, int] = (0, 0)
    ticks: str = "```"
    closed: bool = True

    @property
    def lang(self) -> str:
        """The language the label names: its first word (``python`` of ``python
        src/app.py`` and of ``python:src/app.py``); "" for a block without one."""
        return fence_lang(self.label)

    def closed_by(self, line: str) -> bool:
        """Whether ``line`` (one line, without its newline) closes this block."""
        stripped = line.strip()
        return stripped.startswith(self.ticks) and not stripped.strip("`")


def fence_lang(label: str) -> str:
    """The language of a fence's ``label``: its first word, up to a space or a colon."""
    words = label.replace(":", " ").split()
    return words[0] if words else ""


def fences(text: str) -> list[Fence]:
    """The fenced code blocks of ``text``, in order (``FENCE``)."""
    return [
        Fence(
            match.group("label"),
            match.group("body"),
            match.span(),
            match.span("body"),
            match.group("ticks"),
            bool(match.group("close")),
        )
        for match in FENCE.finditer(text)
    ]


def fence_opening(line: str) -> Fence | None:
    """The block ``line`` (one line, without its newline) opens, read as the first line of
    ``FENCE`` reads it; None when it is no fence line. A bare fence line opens an unlabelled
    block (inside a block, ``Fence.closed_by`` says whether it closes it)."""
    match = _OPENING_LINE.match(line)
    return None if match is None else Fence(match.group("label"), ticks=match.group("ticks"))


def extract_command(reply: str) -> str:
    """One command from ``reply``: fenced block, ``CMD:`` line, inline code, or a bare line.

    Raises ``ModelOutputError`` when the reply is empty or holds nothing command-like.
    """
    text = reply.replace("\r\n", "\n").strip()
    if not text:
        raise ModelOutputError(EMPTY_REPLY)
    for match in _CMD_LINE.finditer(text):
        command = clean_command(match.group(1))
        if command:
            return command
    for fence in fences(text):
        if fence.lang.lower() in SHELL_LANGS:
            command = _from_block(fence.body)
            if command:
                return command
    lines = [ln for ln in text.split("\n") if ln.strip() and not ln.strip().startswith("```")]
    if len(lines) == 1:
        only = lines[0].strip()
        whole = _INLINE.fullmatch(only)
        if whole:
            return clean_command(whole.group(1))
        spans = _INLINE.findall(only)
        if spans and _PROSE_LEAD.match(only):
            return clean_command(max(spans, key=len))
        if _is_sentence(only):
            raise ModelOutputError(PROSE_REPLY)
        return clean_command(only)
    # Several lines of prose: prefer inline code that starts with a real program, then a
    # line that does.
    for span in _INLINE.findall(text):
        if _looks_like_command(span):
            return clean_command(span)
    for line in lines:
        if _looks_like_command(line):
            return clean_command(line)
    first = clean_command(lines[0])
    if first and not _PROSE_LEAD.match(first) and not _is_sentence(first):
        return first
    raise ModelOutputError(PROSE_REPLY)


def _from_block(body: str) -> str:
    joined: list[str] = []
    for raw in body.split("\n"):
        line = raw.rstrip()
        if not line.strip() or line.strip().startswith("#"):
            if joined:
                break
            continue
        joined.append(line)
        if not line.endswith("\\"):
            break
    return clean_command(" ".join(part.rstrip("\\").strip() for part in joined))


def clean_command(command: str) -> str:
    command = command.strip()
    if len(command) >= 2 and command[0] == command[-1] == "`":
        command = command.strip("`").strip()
    command = _PROMPT.sub("", command, count=1)
    command = _OPTION_DASH.sub(_ascii_dashes, command)
    return command.strip()


def _ascii_dashes(match: re.Match[str]) -> str:
    return "".join("--" if dash in _LONG_DASHES else "-" for dash in match.group(1))


def _is_sentence(line: str) -> bool:
    """A line of prose rather than a command: four words or more that end like a sentence,
    the first capitalised and no program here (``I am sorry, but I cannot ...``)."""
    words = line.split()
    return (
        len(words) >= 4
        and line.rstrip()[-1] in ".?!"
        and _SENTENCE_START.fullmatch(words[0]) is not None
        and shutil.which(words[0].rstrip(",")) is None
    )


def _looks_like_command(line: str) -> bool:
    line = clean_command(line)
    if not line or _PROSE_LEAD.match(line):
        return False
    first = line.split()[0]
    return shutil.which(first) is not None
