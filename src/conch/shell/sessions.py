"""Saved ``conch shell`` sessions: one JSON Lines file per session in the state directory.

Every record is one line, appended with one ``write`` under a lock, so a crash or Ctrl+C
never leaves half a record, and two shells never interleave theirs. The records:

- ``start``: when and where the session began, and its model;
- ``turn``: a user or assistant turn, as the model was sent it (``content``: the ``[exec
  output]`` blocks first) and, for a user turn, as it was typed (``text``); tokens used;
- ``exec``: a command that ran in the shell, with its exit code and where it came from
  (``typed``, ``suggested``, ``edited``, or ``auto``: the agent's);
- ``memory``: the session's summary was remembered (its ``number`` in the memory, whether
  the model wrote it: ``by_model``, and if not, the ``error``), at ``:quit`` and ``:save``;
- ``earlier``: the summary of the turns the window let go (``summary``), as it now stands;
- ``file``: a file a reply proposed (``path``), and whether it was ``written``;
- ``plan``: the plan of an ``:auto`` goal (``plan``: ``conch.shell.preplan.Plan.to_dict``),
  when it is made, as each step ends and when it is cut short;
- ``reset``: ``:reset`` was given; the turns, summary and plan before it are not taken up
  again;
- ``resume``: ``conch shell --continue`` took the session up again (its turns, the last
  ``earlier`` summary and the last ``plan``).

``SavedSession`` is one session's file; ``last`` in the same directory names the newest
session, for ``--continue``.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from conch.errors import ConchError
from conch.messages import Message
from conch.shell.context import turn_from_dict
from conch.storage.files import append_line

__all__ = [
    "SESSIONS_DIR",
    "SavedSession",
    "ShellSessionError",
    "read_json_lines",
    "resumable_turns",
]

SESSIONS_DIR = "shell-sessions"
VERSION = 1
LOCK_TIMEOUT_S = 5.0
_LAST = "last"


class ShellSessionError(ConchError):
    """A saved shell session cannot be written or taken up again (names the file and what to
    do)."""


class SavedSession:
    """One session's file. ``create`` starts a new one, ``last`` finds the newest."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = FileLock(str(path.parent / ".lock"))

    @classmethod
    def create(cls, state_dir: Path, cwd: str, model: str) -> SavedSession:
        """A new session file (named by its start time and this process) with its ``start``
        record, made the ``last`` one."""
        from conch.storage.files import atomic_write_text

        directory = state_dir / SESSIONS_DIR
        stamp = time.strftime("%Y%m%d-%H%M%S")
        session = cls(directory / f"{stamp}-{os.getpid()}.jsonl")
        session.append({"type": "start", "version": VERSION, "cwd": cwd, "model": model})
        try:
            atomic_write_text(directory / _LAST, session.path.name + "\n")
        except OSError as exc:
            raise ShellSessionError(f"cannot write {directory / _LAST}: {exc}") from None
        return session

    @classmethod
    def last(cls, state_dir: Path) -> SavedSession | None:
        """The newest session, or None when there is none (or its file is gone)."""
        directory = state_dir / SESSIONS_DIR
        try:
            name = (directory / _LAST).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        path = directory / name
        if not name or "/" in name or not path.is_file():
            return None
        return cls(path)

    def append(self, record: dict[str, Any]) -> None:
        """Add one record (``ts`` is set to now), as one line. ShellSessionError when the
        file cannot be written."""
        line = json.dumps({"ts": _now(), **record}, ensure_ascii=False) + "\n"
        data = line.encode("utf-8")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self._lock.acquire(timeout=LOCK_TIMEOUT_S):
                append_line(self.path, data)
        except Timeout:
            raise ShellSessionError(f"the session file {self.path} is locked") from None
        except OSError as exc:
            raise ShellSessionError(f"cannot write the session file {self.path}: {exc}") from None

    def add_turn(
        self,
        turn: Message,
        *,
        text: str | None = None,
        model: str | None = None,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
    ) -> None:
        """Record a turn: what the model was sent (or said), and what was typed."""
        record: dict[str, Any] = {"type": "turn", "role": turn.role, "content": turn.content}
        if text is not None:
            record["text"] = text
        if model is not None:
            record["model"] = model
        if prompt_tokens or completion_tokens:
            record["prompt_tokens"] = prompt_tokens
            record["completion_tokens"] = completion_tokens
        self.append(record)

    def records(self) -> list[dict[str, Any]]:
        """Every well-formed record, oldest first (a damaged line is skipped)."""
        found = read_json_lines(self.path, "the session file", ShellSessionError)
        return [record for record in found if isinstance(record.get("type"), str)]

    def turns(self) -> list[Message]:
        """The turns to take up again (``resumable_turns`` of the records)."""
        return resumable_turns(self.records())


def read_json_lines(
    path: Path, what: str, error: Callable[[str], ConchError]
) -> list[dict[str, Any]]:
    """The JSON objects of the JSON Lines file ``path``, one a line, oldest first: a line
    that is not one (damaged, cut short) is skipped, and a file that is not there holds
    none. ``error`` (a message naming ``what`` the file is) when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise error(f"cannot read {what} {path}: {exc}") from None
    found = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def resumable_turns(records: Iterable[dict[str, Any]]) -> list[Message]:
    """The turns after the last ``reset``, user and assistant alternating from a user turn:
    a user turn left without an answer (a reply that failed or was stopped) is dropped, and
    so is a turn that would break the alternation."""
    turns: list[Message] = []
    for record in records:
        if record["type"] == "reset":
            turns = []
            continue
        if record["type"] != "turn":
            continue
        try:
            turn = turn_from_dict(record)
        except ValueError:
            continue
        if turns and turns[-1].role == turn.role == "user":
            turns[-1] = turn  # the earlier question got no answer: this one stands for both
        elif (turn.role == "user") == (len(turns) % 2 == 0):
            turns.append(turn)
    if turns and turns[-1].role == "user":
        turns.pop()
    return turns


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
