"""What ``conch shell`` remembers across sessions, and of the turns its window lets go.

At ``:quit`` or ``:save`` the model writes a few short lines about the session
(``summarize_session``): what was worked on, what was found or fixed, what is left. A
``MemoryStore`` keeps those summaries in one JSON Lines file in the state directory (beside
the saved sessions, ``conch.shell.sessions``), each with a number that never changes, so
``:history list``, ``:history show N`` and ``:history delete N`` can name them. The next
session starts with the newest few (``MemoryStore.recent``, ``memory_block``) after its
system prompt, so "go on with yesterday's fix" needs no retelling.

Within a session the context window slides (``conch.shell.context.Context``): the oldest
turns go a question-and-answer pair at a time. ``summarize_evicted`` folds what went into a
running summary of the earlier conversation instead of dropping it silently; when the model
cannot be asked, a plain digest of the questions stands in (``digest``).

Everything is sized for a small local model: the transcript it reads is cut to a few
thousand characters (command output reduced to the command and its exit code), and it may
answer in a few lines only.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from conch.errors import EMPTY_REPLY, ConchError, ModelOutputError
from conch.messages import GenerationOptions, Message, Usage
from conch.providers.base import EventCallback, Provider, complete
from conch.shell.context import EXEC_TAG
from conch.shell.sessions import read_json_lines
from conch.storage.files import append_line, atomic_write_text

__all__ = [
    "EVICTED_PROMPT",
    "MEMORY_DIR",
    "SESSION_PROMPT",
    "SUMMARY_TOKENS",
    "MemoryEntry",
    "MemoryStore",
    "MemoryStoreError",
    "Summarized",
    "digest",
    "evicted_turns",
    "memory_block",
    "summarize_evicted",
    "summarize_session",
    "transcript",
]

MEMORY_DIR = "shell-memory"
_FILE = "memory.jsonl"
LOCK_TIMEOUT_S = 5.0
#: The most a summary may be: tokens the model may write, lines and characters kept.
SUMMARY_TOKENS = 160
SUMMARY_LINES = 6
SUMMARY_CHARS = 600
#: How much of a session the model reads: characters of transcript, and of one message.
TRANSCRIPT_CHARS = 5000
MESSAGE_CHARS = 600
#: How many summaries a store keeps; older ones go as new ones come.
KEEP = 200

SESSION_PROMPT = (
    "Summarize this shell session for the user's next session, in at most 5 short lines: "
    "what they worked on, what was found or fixed, and what is left to do. Name files and "
    "commands exactly. No preamble."
)
EVICTED_PROMPT = (
    "Below is the summary so far of a shell session, then more of it. Write the new summary "
    "in at most 5 short lines: what the user asked, what was found, what is left. Name files "
    "and commands exactly. No preamble."
)
_PREAMBLE = re.compile(
    r"^(?:here(?:'s| is) (?:a |the )?(?:short |brief )?summary\b.*|(?:session )?summary:?)\s*$",
    re.I,
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_EXEC_HEAD = re.compile(r"^\[exec output\]\n\$ (.*)\nexit code: (-?\d+)$", re.M)


class MemoryStoreError(ConchError):
    """The memory file cannot be read or written, or has no summary of that number."""


@dataclass(frozen=True, slots=True)
class Summarized:
    """A summary and the tokens it took. ``by_model`` is false when the model could not be
    asked and ``digest`` stands in (``error`` says why)."""

    text: str
    usage: Usage = field(default_factory=Usage)
    by_model: bool = True
    error: str = ""


@dataclass(frozen=True, slots=True)
class MemoryEntry:
    """One remembered session: its ``number`` (stable: deleting another never renumbers it),
    when it was written (``ts``), where the session ran (``cwd``), its model, the session's
    file name (``session``, in ``shell-sessions``; empty when unknown) and the summary."""

    number: int
    ts: str
    cwd: str
    model: str
    summary: str
    session: str = ""

    def line(self) -> str:
        """One line for ``:history list``: number, date, directory, the summary's first
        line."""
        first = self.summary.split("\n", 1)[0]
        return f"{self.number:>4}  {self.ts[:16].replace('T', ' ')}  {self.cwd}  {first}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "ts": self.ts,
            "cwd": self.cwd,
            "model": self.model,
            "session": self.session,
            "summary": self.summary,
        }

    @classmethod
    def from_dict(cls, data: object) -> MemoryEntry | None:
        """The entry ``to_dict`` wrote, or None when ``data`` is not one."""
        if not isinstance(data, dict):
            return None
        number, summary = data.get("number"), data.get("summary")
        if not isinstance(number, int) or not isinstance(summary, str) or not summary:
            return None

        def text(key: str) -> str:
            value = data.get(key)
            return value if isinstance(value, str) else ""

        return cls(number, text("ts"), text("cwd"), text("model"), summary, text("session"))


class MemoryStore:
    """The summaries of past sessions: ``state_dir/shell-memory/memory.jsonl``, one line
    each, appended under a lock (``delete`` and pruning rewrite the file atomically)."""

    def __init__(self, state_dir: Path, keep: int = KEEP) -> None:
        if keep < 1:
            raise ValueError("keep must be at least 1")
        self.directory = state_dir / MEMORY_DIR
        self.path = self.directory / _FILE
        self.keep = keep
        self._lock = FileLock(str(self.directory / ".lock"))

    def entries(self) -> list[MemoryEntry]:
        """Every summary, oldest first (a damaged line is skipped)."""
        found = read_json_lines(self.path, "the memory file", MemoryStoreError)
        return [entry for data in found if (entry := MemoryEntry.from_dict(data)) is not None]

    def add(self, summary: str, *, cwd: str, model: str, session: str = "") -> MemoryEntry:
        """Remember a session's summary; the oldest go past ``keep``. ValueError for an
        empty summary."""
        if not summary.strip():
            raise ValueError("an empty summary is not remembered")
        with self._locked():
            entries = self.entries()
            number = max((e.number for e in entries), default=0) + 1
            entry = MemoryEntry(number, _now(), cwd, model, summary.strip(), session)
            if len(entries) >= self.keep:
                self._rewrite([*entries[len(entries) - self.keep + 1 :], entry])
            else:
                line = json.dumps(entry.to_dict(), ensure_ascii=False) + "\n"
                append_line(self.path, line.encode("utf-8"))
        return entry

    def recent(self, count: int, cwd: str | None = None) -> list[MemoryEntry]:
        """The newest ``count`` summaries (of sessions in ``cwd`` only, when given), oldest
        first: the order to read them in."""
        if count < 1:
            return []
        entries = [e for e in self.entries() if cwd is None or e.cwd == cwd]
        return entries[-count:]

    def show(self, number: int) -> MemoryEntry:
        """The summary numbered ``number``; MemoryStoreError when there is none."""
        for entry in self.entries():
            if entry.number == number:
                return entry
        raise MemoryStoreError(f"no remembered session numbered {number} (:history list)")

    def delete(self, number: int) -> MemoryEntry:
        """Forget the summary numbered ``number``; MemoryStoreError when there is none."""
        with self._locked():
            entries = self.entries()
            kept = [e for e in entries if e.number != number]
            if len(kept) == len(entries):
                raise MemoryStoreError(f"no remembered session numbered {number} (:history list)")
            self._rewrite(kept)
        return next(e for e in entries if e.number == number)

    def list_lines(self) -> list[str]:
        """``:history list``: a line per remembered session, oldest first."""
        entries = self.entries()
        if not entries:
            return ["no sessions remembered yet (a summary is written at :quit and :save)"]
        return [entry.line() for entry in entries]

    def _rewrite(self, entries: Sequence[MemoryEntry]) -> None:
        """The file with ``entries`` only, written atomically (the caller holds the lock)."""
        text = "".join(json.dumps(e.to_dict(), ensure_ascii=False) + "\n" for e in entries)
        atomic_write_text(self.path, text)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """The store's lock, held for one change; a file error as ``MemoryStoreError``."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with self._lock.acquire(timeout=LOCK_TIMEOUT_S):
                yield
        except Timeout:
            raise MemoryStoreError(f"the memory file {self.path} is locked") from None
        except OSError as exc:
            raise MemoryStoreError(f"cannot write the memory file {self.path}: {exc}") from None


def memory_block(entries: Sequence[MemoryEntry], max_chars: int = 1200) -> str:
    """The summaries as the next session's model reads them (after its system prompt):
    ``[memory]`` and one paragraph per session, newest last, cut from the oldest to fit
    ``max_chars``. Empty when there is nothing to remember."""
    parts = [f"{e.ts[:10]} in {e.cwd}:\n{e.summary}" for e in entries]
    while parts and len("\n\n".join(parts)) > max_chars:
        del parts[0]
    if not parts:
        return ""
    return "[memory] Earlier sessions of the user:\n" + "\n\n".join(parts)


def transcript(turns: Sequence[Message], max_chars: int = TRANSCRIPT_CHARS) -> str:
    """The turns as the summarizing model reads them: ``User:``/``conch:`` paragraphs,
    each message cut to ``MESSAGE_CHARS``, ``[exec output]`` blocks reduced to the command
    and its exit code (``ran: make test (exit 2)``); the oldest paragraphs go first to fit
    ``max_chars``."""
    parts = []
    for turn in turns:
        who = "User" if turn.role == "user" else "conch"
        parts.append(f"{who}: {_cut(_reduced(turn.content), MESSAGE_CHARS)}")
    while len(parts) > 1 and len("\n\n".join(parts)) > max_chars:
        del parts[0]
    return "\n\n".join(parts)[-max_chars:]


def summarize_session(
    provider: Provider,
    turns: Sequence[Message],
    *,
    options: GenerationOptions | None = None,
    on_event: EventCallback | None = None,
) -> Summarized | None:
    """The model's summary of a session's ``turns`` (None without asking when there are
    none). ModelOutputError when the reply holds no summary; the provider's errors as
    raised."""
    if not turns:
        return None
    return _ask(provider, SESSION_PROMPT, transcript(turns), options, on_event)


def summarize_evicted(
    provider: Provider,
    turns: Sequence[Message],
    previous: str = "",
    *,
    options: GenerationOptions | None = None,
    on_event: EventCallback | None = None,
) -> Summarized:
    """A new summary of the earlier conversation: ``previous`` (the summary so far) and the
    ``turns`` the window just evicted (``evicted_turns``). When the model cannot be asked
    or writes nothing usable, ``digest`` stands in, ``by_model`` false and ``error`` saying
    why, so the turns never go silently."""
    body = transcript(turns)
    if previous.strip():
        body = f"Summary so far:\n{previous.strip()}\n\nThen:\n{body}"
    try:
        return _ask(provider, EVICTED_PROMPT, body, options, on_event)
    except ConchError as exc:
        return Summarized(digest(turns, previous), by_model=False, error=str(exc))


def evicted_turns(before: Sequence[Message], evicted: int) -> list[Message]:
    """The turns an ``Eviction`` of ``evicted`` turns took, given the turns the context had
    before ``Context.ask`` (``context.turns``): the window only ever drops its oldest."""
    return list(before[: max(evicted, 0)])


def digest(turns: Sequence[Message], previous: str = "") -> str:
    """A summary without a model: ``previous``, then the first line of each question
    (commands as ``ran: ...``), bounded like a model's summary."""
    lines = [line for line in previous.strip().split("\n") if line.strip()]
    for turn in turns:
        if turn.role == "user":
            first = _reduced(turn.content).strip().split("\n")
            lines += [f"- {_cut(line, 120)}" for line in first if line.strip()][:2]
    kept = lines[-SUMMARY_LINES:]
    while len(kept) > 1 and len("\n".join(kept)) > SUMMARY_CHARS:
        del kept[0]  # the newest questions matter most
    return _cut("\n".join(kept), SUMMARY_CHARS)


def _ask(
    provider: Provider,
    instruction: str,
    body: str,
    options: GenerationOptions | None,
    on_event: EventCallback | None,
) -> Summarized:
    base = options or GenerationOptions()
    asked = GenerationOptions(
        temperature=base.temperature, max_tokens=SUMMARY_TOKENS, seed=base.seed
    )
    messages = [Message("system", instruction), Message("user", body)]
    response = complete(provider, messages, asked, on_event=on_event)
    text = _clean(response.text)
    if not text:
        raise ModelOutputError(EMPTY_REPLY)
    return Summarized(text, response.usage)


def _clean(reply: str) -> str:
    """A reply cut to a summary: no preamble, no code fences, bullets as ``- ``, at most
    ``SUMMARY_LINES`` lines and ``SUMMARY_CHARS`` characters."""
    lines: list[str] = []
    for raw in reply.replace("\r\n", "\n").split("\n"):
        line = raw.strip()
        if not line or line.startswith("```") or _PREAMBLE.match(line):
            continue
        lines.append(_BULLET.sub("- ", line))
    return _bounded(lines[:SUMMARY_LINES])


def _bounded(lines: list[str]) -> str:
    """``lines`` joined, the last ones dropped (or the only one cut) to fit
    ``SUMMARY_CHARS``."""
    kept = list(lines)
    while len(kept) > 1 and len("\n".join(kept)) > SUMMARY_CHARS:
        kept.pop()
    return _cut("\n".join(kept), SUMMARY_CHARS)


def _reduced(content: str) -> str:
    """A user turn with each ``[exec output]`` block reduced to ``ran: CMD (exit N)``; the
    text typed after the last block (its last paragraph) is kept."""
    if EXEC_TAG not in content:
        return content.strip()
    ran = [f"ran: {m.group(1)} (exit {m.group(2)})" for m in _EXEC_HEAD.finditer(content)]
    last = content.rsplit(f"{EXEC_TAG}\n", 1)[-1]
    paragraphs = last.split("\n\n")
    typed = paragraphs[-1].strip() if len(paragraphs) > 1 else ""
    return "\n".join([*ran, typed] if typed else ran)


def _cut(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
