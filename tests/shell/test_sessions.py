"""Saved shell sessions: records appended whole, the last session found again, and the turns
taken up by ``--continue``."""

from __future__ import annotations

import json
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from conch.messages import Message
from conch.shell.context import Context
from conch.shell.sessions import SESSIONS_DIR, SavedSession, ShellSessionError, resumable_turns


def test_a_new_session_starts_with_its_start_record_and_becomes_the_last(tmp_path: Path) -> None:
    session = SavedSession.create(tmp_path, "/home/ada", "fast")
    assert session.path.parent == tmp_path / SESSIONS_DIR
    records = session.records()
    assert [r["type"] for r in records] == ["start"]
    assert records[0]["cwd"] == "/home/ada" and records[0]["model"] == "fast"
    assert "ts" in records[0]
    assert stat.S_IMODE(session.path.stat().st_mode) == 0o600
    last = SavedSession.last(tmp_path)
    assert last is not None and last.path == session.path


def test_there_is_no_last_session_before_the_first_or_when_its_file_is_gone(
    tmp_path: Path,
) -> None:
    assert SavedSession.last(tmp_path) is None
    session = SavedSession.create(tmp_path, "/", "fast")
    session.path.unlink()
    assert SavedSession.last(tmp_path) is None


def test_turns_and_commands_are_recorded_and_the_turns_taken_up_again(tmp_path: Path) -> None:
    session = SavedSession.create(tmp_path, "/", "fast")
    session.append({"type": "exec", "command": "ls", "exit_code": 0, "source": "typed"})
    session.add_turn(Message("user", "[exec output]\n$ ls\n\nwhat is this"), text="what is this")
    session.add_turn(
        Message("assistant", "A directory."), model="fast", prompt_tokens=9, completion_tokens=2
    )
    records = session.records()
    assert [r["type"] for r in records] == ["start", "exec", "turn", "turn"]
    assert records[2]["text"] == "what is this"
    assert records[3]["model"] == "fast" and records[3]["completion_tokens"] == 2
    again = SavedSession.last(tmp_path)
    assert again is not None
    assert again.turns() == [
        Message("user", "[exec output]\n$ ls\n\nwhat is this"),
        Message("assistant", "A directory."),
    ]
    context = Context("system")
    context.restore(again.turns())
    assert [m.role for m in context.messages()] == ["system", "user", "assistant"]


def turn(role: str, content: str) -> dict[str, Any]:
    return {"type": "turn", "role": role, "content": content}


def test_only_the_turns_after_the_last_reset_are_taken_up() -> None:
    records = [
        turn("user", "old"),
        turn("assistant", "old reply"),
        {"type": "reset"},
        turn("user", "new"),
        turn("assistant", "new reply"),
    ]
    assert resumable_turns(records) == [Message("user", "new"), Message("assistant", "new reply")]


def test_a_question_left_without_an_answer_is_not_taken_up() -> None:
    records = [turn("user", "a"), turn("assistant", "b"), turn("user", "stopped midway")]
    assert resumable_turns(records) == [Message("user", "a"), Message("assistant", "b")]


def test_turns_that_would_break_the_alternation_are_skipped() -> None:
    records = [
        turn("assistant", "an answer to nothing"),
        turn("user", "first try"),
        turn("user", "second try"),
        turn("assistant", "reply"),
        turn("assistant", "a second reply"),
        {"type": "turn", "role": "system", "content": "x"},
        {"type": "turn", "role": "user"},
    ]
    assert resumable_turns(records) == [
        Message("user", "second try"),
        Message("assistant", "reply"),
    ]


def test_a_damaged_line_is_skipped_and_the_rest_read(tmp_path: Path) -> None:
    session = SavedSession.create(tmp_path, "/", "fast")
    with open(session.path, "a", encoding="utf-8") as handle:
        handle.write('{"type": "turn", "role": "us\n[1, 2]\n')
    session.add_turn(Message("user", "q"))
    session.add_turn(Message("assistant", "a"))
    assert [r["type"] for r in session.records()] == ["start", "turn", "turn"]
    assert len(session.turns()) == 2


def test_appends_from_two_shells_at_once_keep_every_record_whole(tmp_path: Path) -> None:
    first = SavedSession.create(tmp_path, "/", "fast")
    second = SavedSession(first.path)
    text = "x" * 5000

    def write(session: SavedSession, who: str) -> None:
        for number in range(100):
            session.append({"type": "exec", "command": f"{who}{number} {text}", "exit_code": 0})

    threads = [
        threading.Thread(target=write, args=(s, w)) for s, w in ((first, "a"), (second, "b"))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = first.path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 201
    assert all(json.loads(line)["type"] in ("start", "exec") for line in lines)


def test_a_session_that_cannot_be_written_says_which_file(tmp_path: Path) -> None:
    blocked = tmp_path / "state"
    blocked.write_text("a file where the directory should be", encoding="utf-8")
    with pytest.raises(ShellSessionError, match="state"):
        SavedSession.create(blocked, "/", "fast")
