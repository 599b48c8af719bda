"""What a ``conch shell`` session remembers, wired to ``conch.shell.memory``.

- ``recall``: at the start, the newest summaries of sessions in this directory become the
  ``[memory]`` block after the system prompt (``memory_block``, ``shell.memory_recent`` of
  them).
- ``write_summary``: at ``:quit`` (and Ctrl+D) and at ``:save``, the model writes a few lines
  about the session into the ``MemoryStore`` (``summarize_session``), unless no model turn
  happened since the last one. A model that cannot answer never keeps the user from
  leaving: a digest of the questions stands in, and the reason is said and kept in the
  saved session. Writing it again (``:save``, then ``:quit``) replaces the session's earlier
  summary.
- ``evicted``: the turns the context window let go are folded into a running summary of the
  earlier conversation (``summarize_evicted``), kept in the system prompt
  (``ShellParts.refresh_system``), instead of being dropped silently.
- ``history``: ``:history list``, ``:history show N``, ``:history delete N``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING

from conch.errors import ConchError
from conch.messages import Message
from conch.shell.cost import estimate
from conch.shell.events import Listed, Said, ShellEvent, Working
from conch.shell.memory import (
    EVICTED_PROMPT,
    SESSION_PROMPT,
    MemoryStoreError,
    Summarized,
    digest,
    evicted_turns,
    memory_block,
    summarize_evicted,
    summarize_session,
    transcript,
)

if TYPE_CHECKING:
    from conch.shell.context import Eviction
    from conch.shell.parts import ShellParts

__all__ = ["evicted", "history", "recall", "write_summary"]


def recall(parts: ShellParts) -> Iterator[ShellEvent]:
    """The summaries of earlier sessions in the shell's directory, for the model."""
    settings = parts.settings
    if not settings.memory or settings.memory_recent < 1:
        return
    try:
        entries = parts.memory.recent(settings.memory_recent, cwd=parts.state.cwd)
    except MemoryStoreError as exc:
        yield Said(f"{exc}; the model starts without the earlier sessions", warning=True)
        return
    parts.remembered = memory_block(entries)
    if parts.remembered:
        count = len(entries)
        what = "an earlier session" if count == 1 else f"{count} earlier sessions"
        yield Said(f"the model remembers {what} here (:history list)")


def write_summary(parts: ShellParts) -> Iterator[ShellEvent]:
    """The session's summary into the memory (the module says when, and what happens when
    the model cannot write it). Ctrl+C skips it."""
    if not parts.settings.memory or not parts.talked:
        return
    turns = list(parts.context.turns)
    if parts.earlier:
        turns.insert(0, Message("user", f"(earlier in this session)\n{parts.earlier}"))
    if not turns:
        return
    yield Working("summarizing the session")
    try:
        summarized = summarize_session(parts.provider, turns, options=parts.options)
    except KeyboardInterrupt:
        yield Said("no summary of this session: stopped")
        return
    except (ConchError, OSError) as exc:
        summarized = Summarized(digest(turns), by_model=False, error=str(exc) or repr(exc))
    if summarized is None:
        return
    if summarized.by_model:
        body = [Message("system", SESSION_PROMPT), Message("user", transcript(turns))]
        yield from parts.count(
            summarized.usage, "memory", estimated=estimate(body, summarized.text)
        )
    yield from _store(parts, summarized)


def _store(parts: ShellParts, summarized: Summarized) -> Iterator[ShellEvent]:
    """Keep ``summarized`` as this session's summary (replacing the one written before)."""
    session = parts.saved.path.name if parts.saved is not None else ""
    try:
        if parts.summary_number is not None:
            # Forgotten with :history delete already: nothing to replace.
            with suppress(MemoryStoreError):
                parts.memory.delete(parts.summary_number)
        entry = parts.memory.add(
            summarized.text, cwd=parts.start_cwd, model=parts.choice.name, session=session
        )
    except MemoryStoreError as exc:
        yield Said(f"{exc}; this session is not remembered", warning=True)
        return
    parts.summary_number, parts.talked = entry.number, 0
    record = {"type": "memory", "number": entry.number, "by_model": summarized.by_model}
    if not summarized.by_model:
        record["error"] = summarized.error
        yield Said(
            f"the model could not summarize the session ({summarized.error}); "
            f"kept a digest of its questions as #{entry.number}",
            warning=True,
        )
    else:
        yield Said(f"remembered this session as #{entry.number} (:history show {entry.number})")
    yield from parts.save(record)


def evicted(
    parts: ShellParts, eviction: Eviction | None, before: Sequence[Message]
) -> Iterator[ShellEvent]:
    """Say what the window evicted and fold those turns into the summary of the earlier
    conversation; ``before``: the context's turns before the turn that slid it."""
    if eviction is None:
        return
    gone = evicted_turns(before, eviction.turns)
    if not gone or not parts.settings.summarize_evicted:
        yield Said(eviction.notice)
        return
    yield Working("summarizing the evicted turns")
    try:
        summarized = summarize_evicted(parts.provider, gone, parts.earlier, options=parts.options)
    except KeyboardInterrupt:
        summarized = Summarized(digest(gone, parts.earlier), by_model=False, error="stopped")
    parts.earlier = summarized.text
    if summarized.by_model:
        body = [Message("system", EVICTED_PROMPT), Message("user", transcript(gone))]
        yield from parts.count(
            summarized.usage, "memory", estimated=estimate(body, summarized.text)
        )
        yield Said(f"{eviction.notice}; the model keeps a summary of them")
    else:
        yield Said(f"{eviction.notice}; a digest of them stays ({summarized.error})")
    yield from parts.save({"type": "earlier", "summary": parts.earlier})


def history(parts: ShellParts, argument: str) -> Iterator[ShellEvent]:
    """``:history list``, ``:history show N``, ``:history delete N`` over the memory."""
    word, _, number = argument.partition(" ")
    try:
        if word == "list":
            yield Listed(tuple(parts.memory.list_lines()))
        elif word == "show":
            entry = parts.memory.show(int(number))
            head = f"#{entry.number}  {entry.ts[:16].replace('T', ' ')}  {entry.cwd}"
            yield Listed((f"{head}  ({entry.model})", *entry.summary.split("\n")))
        else:
            entry = parts.memory.delete(int(number))
            if entry.number == parts.summary_number:
                parts.summary_number = None
            yield Said(f"forgot the session #{entry.number}")
    except MemoryStoreError as exc:
        yield Said(str(exc), warning=True)
