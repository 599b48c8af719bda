"""What the model of ``conch shell`` sees: the system prompt, the turns, and what just ran.

A ``Context`` holds the system prompt (sent first, never stored as a turn) and the turns, user
and assistant alternating. Every command that runs in the shell, typed by the user or
suggested by the model and accepted, is ``record``-ed with its exit code and the tail of its
output. Those records are not a turn of their own: two user messages in a row are refused by
strict chat templates. They wait in a buffer and open the next user turn, one
``[exec output]`` block per command in the order they ran, so "why did that fail?" needs no
more words. ``ask`` builds that turn and returns what to send; ``answer`` stores the reply.

The turns slide: past ``max_turns``, or past the token budget counted with the caller's
counter (``conch.agent.conversation.tokenizer_counter`` for the model's tokenizer, else an
estimate), the oldest turns go a user+assistant pair at a time, and the ``Eviction`` says so.
The newest user turn is never evicted, even when it alone is over the budget.

``suggested_commands`` finds the commands a reply suggests: ``CMD: `` lines and shell code
blocks, where a command that spans lines (a here-document, a loop) is one suggestion.
"""

from __future__ import annotations

import re
import sys
import textwrap
from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass

from conch import sanitize
from conch.agent.conversation import TokenCounter, estimate_tokens, message_tokens
from conch.messages import Message
from conch.policy.parse import ParseFailure, parse_tree
from conch.shell.route import known_commands, route
from conch.validate.extract import SHELL_LANGS, clean_command, fences

__all__ = [
    "BUFFER_COMMANDS",
    "CMD",
    "COMMAND_LINES",
    "EXEC_TAG",
    "MAX_TURNS",
    "PROMPT",
    "SESSION_LANGS",
    "TAIL_CHARS",
    "TAIL_LINES",
    "TOKEN_BUDGET",
    "Context",
    "Eviction",
    "Exec",
    "Prompt",
    "block_commands",
    "is_transcript",
    "output_tail",
    "suggested_commands",
    "turn_from_dict",
    "turn_to_dict",
]

#: How much of a command's output the model is shown: its last lines, at most this many
#: characters of them.
TAIL_LINES = 40
TAIL_CHARS = 4000
#: How many commands the buffer holds between two questions; older ones are dropped.
BUFFER_COMMANDS = 10
MAX_TURNS = 40
TOKEN_BUDGET = 4096
#: The most lines after its first that one command of a code block may take (the body of a
#: here-document, a loop); a command that needs more stays its first line alone.
COMMAND_LINES = 60
EXEC_TAG = "[exec output]"

#: How a reply's line suggests a command (at the start of the line, exactly).
CMD = "CMD: "
_CMD_LINE = re.compile(rf"^{CMD}(.*)$", re.M)
# Fences whose lines are prompts and their output, like a terminal transcript.
SESSION_LANGS = frozenset({"console", "shell-session", "terminal"})
PROMPT = "$ "
_CONTINUATION_PROMPT = "> "


@dataclass(frozen=True, slots=True)
class Exec:
    """One command that ran in the shell: what it was, its exit code, its output's tail."""

    command: str
    exit_code: int
    tail: str

    def block(self) -> str:
        """The command as the model reads it, at the start of the next user turn."""
        output = self.tail or "(no output)"
        return f"{EXEC_TAG}\n$ {self.command}\nexit code: {self.exit_code}\n{output}"


@dataclass(frozen=True, slots=True)
class Eviction:
    """What sliding the window did: ``turns`` evicted (oldest first, in user+assistant
    pairs), and whether the newest user turn is still ``oversize``: over the budget alone
    and kept whole. ``tokens`` is the context's size afterwards, system prompt included."""

    turns: int
    oversize: bool
    tokens: int
    budget: int

    @property
    def notice(self) -> str:
        """A status line for the user, such as ``[context] oldest 2 turns evicted``."""
        parts: list[str] = []
        if self.turns:
            parts.append(f"oldest {self.turns} turns evicted")
        if self.oversize:
            parts.append(
                f"the newest turn alone is over the budget ({self.tokens} of {self.budget} "
                "tokens), kept whole"
            )
        return "[context] " + "; ".join(parts)


@dataclass(frozen=True, slots=True)
class Prompt:
    """What ``Context.ask`` built: the messages for the provider (the system message, the
    turns, the new user turn last) and what the window had to evict for them to fit."""

    messages: tuple[Message, ...]
    eviction: Eviction | None


class Context:
    """The system prompt, the turns, and the commands run since the last question.

    ``counter`` counts the tokens of a text (default: an estimate of four characters per
    token); ``token_budget`` and ``max_turns`` bound what ``ask`` sends.
    """

    def __init__(
        self,
        system: str = "",
        *,
        max_turns: int = MAX_TURNS,
        token_budget: int = TOKEN_BUDGET,
        counter: TokenCounter = estimate_tokens,
    ) -> None:
        if max_turns < 1 or token_budget < 1:
            raise ValueError("max_turns and token_budget must be at least 1")
        self.system = system
        self.max_turns = max_turns
        self.token_budget = token_budget
        self.counter = counter
        self._turns: list[Message] = []
        self._buffer: list[Exec] = []
        self._dropped = 0  # commands that fell out of the buffer since the last question

    @property
    def turns(self) -> tuple[Message, ...]:
        """The turns, oldest first."""
        return tuple(self._turns)

    @property
    def pending(self) -> tuple[Exec, ...]:
        """The commands waiting to open the next user turn, in the order they ran."""
        return tuple(self._buffer)

    def record(self, command: str, exit_code: int, output: str) -> Exec:
        """Remember that ``command`` ran, for the next user turn; its output is cut to its
        tail (``output_tail``)."""
        ran = Exec(command.strip(), exit_code, output_tail(output))
        self._buffer.append(ran)
        if len(self._buffer) > BUFFER_COMMANDS:
            del self._buffer[0]
            self._dropped += 1
        return ran

    def ask(self, text: str) -> Prompt:
        """Add a user turn, ``text`` after the buffered commands' blocks, and slide the window.

        The buffer is emptied. When the last turn is a user turn still without an answer
        (the reply failed or was interrupted), the new text joins it, so two user turns
        never follow each other. ValueError when there is nothing to send.
        """
        dropped = _count(self._dropped, "earlier command")
        parts = [f"{EXEC_TAG} [... {dropped} cut]"] if self._dropped else []
        parts += [ran.block() for ran in self._buffer]
        if text.strip():
            parts.append(text.strip())
        if not parts:
            raise ValueError("nothing to send: no text and no command output")
        if self._turns and self._turns[-1].role == "user":
            parts.insert(0, self._turns.pop().content)
        self._turns.append(Message("user", "\n\n".join(parts)))
        self._buffer.clear()
        self._dropped = 0
        eviction = self._slide()
        return Prompt(tuple(self.messages()), eviction)

    def answer(self, text: str) -> None:
        """Store the model's reply to the last user turn. ValueError when no user turn is
        waiting for one."""
        if not self._turns or self._turns[-1].role != "user":
            raise ValueError("no user turn is waiting for an answer")
        self._turns.append(Message("assistant", text))

    def messages(self) -> list[Message]:
        """The system message (when there is a system prompt), then the turns."""
        head = [Message("system", self.system)] if self.system else []
        return head + self._turns

    def tokens(self) -> int:
        """The size of ``messages()`` in tokens."""
        return sum(message_tokens(m, self.counter) for m in self.messages())

    def reset(self) -> None:
        """Forget the turns and the buffered commands (the system prompt stays)."""
        self._turns.clear()
        self._buffer.clear()
        self._dropped = 0

    def restore(self, turns: Iterable[Message]) -> None:
        """Replace the turns with saved ones (``turn_from_dict``). ValueError unless they
        alternate user, assistant, user... from a user turn."""
        restored = list(turns)
        for index, turn in enumerate(restored):
            expected = "user" if index % 2 == 0 else "assistant"
            if turn.role != expected:
                raise ValueError(f"turn {index} is a {turn.role} turn, expected {expected}")
        self._turns = restored

    def _slide(self) -> Eviction | None:
        """Evict the oldest pairs while over ``max_turns`` or the budget; the newest user turn
        is last and always stays."""
        sizes = [message_tokens(m, self.counter) for m in self._turns]
        total = self.tokens()
        evicted = 0
        while len(self._turns) > 1 and (
            len(self._turns) > self.max_turns or total > self.token_budget
        ):
            total -= sizes[0] + sizes[1]
            del self._turns[:2], sizes[:2]
            evicted += 2
        oversize = total > self.token_budget
        if not evicted and not oversize:
            return None
        return Eviction(evicted, oversize, total, self.token_budget)


def output_tail(output: str, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str:
    """The end of a command's output as the model is shown it: terminal escape sequences and
    control characters removed (a line redrawn after a carriage return keeps its last
    drawing), at most ``lines`` lines and ``chars`` characters, and a first line saying what
    was cut, such as ``[... 12 earlier lines cut]``."""
    drawn = [_last_drawing(line) for line in output.replace("\r\n", "\n").split("\n")]
    # No cap here: the tail is cut below, by lines and characters.
    clean = sanitize.paragraph("\n".join(drawn), cap=sys.maxsize)
    every = clean.split("\n") if clean else []
    kept = every[-lines:] if lines > 0 else []
    while len(kept) > 1 and len("\n".join(kept)) > chars:
        del kept[0]
    body = "\n".join(kept)
    cut_chars = max(len(body) - chars, 0)
    body = body[cut_chars:]
    cut_lines = len(every) - len(kept)
    if not cut_lines and not cut_chars:
        return body
    cut = [_count(cut_lines, "earlier line")] if cut_lines else []
    if cut_chars:
        cut.append(_count(cut_chars, "character" if cut_lines else "earlier character"))
    return f"[... {' and '.join(cut)} cut]\n{body}"


def suggested_commands(
    reply: str,
    known: Container[str] | None = None,
    skip: Sequence[tuple[int, int]] = (),
) -> list[str]:
    """The commands ``reply`` suggests, in order, each once: the text of lines that begin
    with exactly ``CMD: ``, and the lines of shell code blocks (``bash``, ``sh``,
    ``shell``, ``console`` and the like; an unlabelled block only when every line of it is
    a command). Lines ending with a backslash join the next; a command its line leaves
    open (a here-document, a loop, an ``if``) takes the lines that close it, as written;
    comments are skipped; in a transcript (``console``, or lines starting with ``$ ``) only
    the prompt lines count.

    ``known`` holds the command names that make an unlabelled block count (see
    ``conch.shell.route.known_commands``; by default, looked up on PATH when needed).
    ``skip``: spans of ``reply`` whose code blocks are no suggestion (the files it
    proposes, ``conch.shell.diffs.Proposed.span``: a script's lines are not commands).
    """
    text = reply.replace("\r\n", "\n")
    found: list[tuple[int, list[str]]] = []
    blocks = fences(text)
    for fence in blocks:
        start = fence.span[0]
        if any(begin <= start < end for begin, end in skip):
            continue
        if known is None and not fence.lang:
            known = known_commands()
        commands = block_commands(fence.lang, fence.body, known)
        if commands is not None:
            found.append((start, commands))
    for line in _CMD_LINE.finditer(text):
        if not any(begin <= line.start() < end for begin, end in (f.span for f in blocks)):
            found.append((line.start(), [line.group(1)]))
    found.sort(key=lambda item: item[0])
    cleaned = (clean_command(command) for _, commands in found for command in commands)
    return list(dict.fromkeys(command for command in cleaned if command))


def block_commands(lang: str, body: str, known: Container[str] | None = None) -> list[str] | None:
    """The commands of a fenced code block labelled ``lang``, or None when it holds none: its
    language is not a shell's, or it is unlabelled and a line of it is not a command (as
    ``route`` judges with ``known``, looked up on PATH by default). In a transcript
    (``console``, or lines starting with ``$ ``) only the prompt lines count."""
    lang = lang.lower()
    if lang not in SHELL_LANGS:
        return None
    commands = _block_commands(body, lang in SESSION_LANGS)
    if not lang:
        known = known_commands() if known is None else known
        if not commands or any(route(c, known).target != "shell" for c in commands):
            return None
    return commands


def is_transcript(lang: str, body: str) -> bool:
    """Whether a fenced block reads as a terminal session: prompts, and output after them."""
    if lang.lower() in SESSION_LANGS:
        return True
    return any(line.strip().startswith(PROMPT) for line in body.split("\n"))


def turn_to_dict(turn: Message) -> dict[str, str]:
    """A turn as JSON-safe data: ``{"role": ..., "content": ...}``."""
    if turn.role not in ("user", "assistant"):
        raise ValueError(f"a {turn.role} message is not a turn of the shell's context")
    return {"role": turn.role, "content": turn.content}


def turn_from_dict(data: object) -> Message:
    """A turn back from ``turn_to_dict``'s data; ValueError when it is not one."""
    if not isinstance(data, Mapping):
        raise ValueError("a turn is a mapping with a role and a content")
    role, content = data.get("role"), data.get("content")
    if role not in ("user", "assistant") or not isinstance(content, str):
        raise ValueError("a turn needs a role (user or assistant) and a text content")
    return Message(role, content)


def _block_commands(body: str, transcript: bool) -> list[str]:
    """The commands of one code block, a line each, backslash continuations joined. Outside
    a transcript, a command its line leaves open (a here-document, a loop, an ``if``, an
    open quote) takes the lines up to where the shell's grammar closes it, as written
    (``_closed``)."""
    raw = textwrap.dedent(body).split("\n")
    lines = [line.strip() for line in raw]
    transcript = transcript or any(line.startswith(PROMPT) for line in lines)
    commands: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if transcript:
            if not line.startswith(PROMPT):
                continue  # a transcript's output, not a command
            line = line.removeprefix(PROMPT).strip()
        line = line.removeprefix("CMD: ")
        if not line or line.startswith("#"):
            continue
        pieces = [line]  # a command continued with a backslash, so far
        while pieces[-1].endswith("\\") and index < len(lines):
            following = lines[index]
            index += 1
            pieces.append(following.removeprefix(_CONTINUATION_PROMPT) if transcript else following)
        command = " ".join(p for p in (piece.removesuffix("\\").strip() for piece in pieces) if p)
        if not transcript:
            command, index = _closed(command, raw, index)
        commands.append(command)
    return commands


def _closed(command: str, raw: Sequence[str], index: int) -> tuple[str, int]:
    """``command`` with the lines of ``raw`` from ``index`` on that it needs to be whole
    shell (at most ``COMMAND_LINES`` of them), and the index after them; ``command`` alone
    when it is whole already, or when no following lines close it (a line that is not shell
    at all is then a command of its own, as before)."""
    if not _open(command):
        return command, index
    taken = [command]
    for end in range(index, min(len(raw), index + COMMAND_LINES)):
        taken.append(raw[end].rstrip())
        if not _open(whole := "\n".join(taken)):
            return whole, end + 1
    return command, index


def _open(command: str) -> bool:
    """Whether the shell's grammar finds ``command`` unfinished or broken (a here-document
    without its end, ``do`` without ``done``, an open quote); text it refuses to parse at
    all (control characters) is left to the policy."""
    try:
        return parse_tree(command).has_error
    except (ParseFailure, RecursionError):
        return False


def _last_drawing(line: str) -> str:
    """What a terminal shows of a line redrawn with carriage returns (a progress bar)."""
    return next((part for part in reversed(line.split("\r")) if part), "")


def _count(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
