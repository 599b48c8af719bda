"""The files an instruction asks for: found in its words, looked for before an answer is
accepted, and an answer given while one is missing held back once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentutil import EventLog, sent

from conch.agent import Session
from conch.agent.builtin import ToolOptions
from conch.agent.conversation import alternation_problems
from conch.agent.outputs import expected_outputs, missing_note, still_empty, still_missing
from conch.messages import TextDelta
from conch.policy import ExecutionMode
from conch.providers.scripted import ScriptedProvider


@pytest.mark.parametrize(
    ("instruction", "expected"),
    [
        ("Count the lines in poem.txt and write only the number to count.txt.", ("count.txt",)),
        ("Create docs/INDEX.md with one line per Markdown file.", ("docs/INDEX.md",)),
        ("Rename draft.txt to final.txt.", ("final.txt",)),
        ("Write a Python script sum.py, run it, save its output in sum.txt", ("sum.py", "sum.txt")),
        # Existing files, patterns, URLs, versions and questions name nothing to produce.
        ("Write the names of the *.log files to the screen", ()),
        ("Save https://example.org/page.html somewhere", ()),
        ("Make the version 1.2 in setup.cfg 1.3", ()),
        ("How many lines does missing.log have?", ()),
        ("Copy poem.txt to ../outside.txt", ()),
    ],
)
def test_the_files_an_instruction_asks_for(
    tmp_path: Path, instruction: str, expected: tuple[str, ...]
) -> None:
    (tmp_path / "poem.txt").write_text("roses\n")
    (tmp_path / "draft.txt").write_text("draft\n")
    (tmp_path / "setup.cfg").write_text("[metadata]\n")
    assert expected_outputs(instruction, tmp_path) == expected


def test_a_bare_name_that_exists_in_a_subdirectory_is_not_asked_for(tmp_path: Path) -> None:
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "IMG_1.jpg").write_bytes(b"jpg")
    instruction = "In photos, rename IMG_ files to holiday_ (IMG_1.jpg becomes holiday_1.jpg)."
    wanted = expected_outputs(instruction, tmp_path)
    assert wanted == ("holiday_1.jpg",)
    (tmp_path / "photos" / "IMG_1.jpg").rename(tmp_path / "photos" / "holiday_1.jpg")
    assert still_missing(wanted, tmp_path) == ()


def test_the_note_names_the_missing_files_and_shows_a_write() -> None:
    note = missing_note(("count.txt",))
    assert "it asks for count.txt, and it does not exist yet" in note
    assert '{"tool": "fs_write", "arguments": {"path": "count.txt"' in note


def _session(tmp_path: Path, *replies: str) -> Session:
    return Session(
        ScriptedProvider.of(*replies),
        # Full-autonomous: the write runs without a question (the rule is tested elsewhere).
        tools=ToolOptions(root=tmp_path, evaluate=False, mode=ExecutionMode.FULL),
        tool_calls="json",
    )


def test_an_answer_before_the_asked_for_file_exists_is_held_back_once(tmp_path: Path) -> None:
    (tmp_path / "poem.txt").write_text("a\nb\nc\n")
    write = {"tool": "fs_write", "arguments": {"path": "count.txt", "content": "3\n"}}
    session = _session(
        tmp_path,
        '{"answer": "3"}',  # the number, in words only
        json.dumps(write),
        '{"answer": "count.txt holds 3."}',
    )
    log = EventLog()
    reply = session.chat("Count the lines in poem.txt and write the number to count.txt", log)
    assert reply == "count.txt holds 3."
    assert (tmp_path / "count.txt").read_text() == "3\n"
    shown = "".join(e.text for e in log.events if isinstance(e, TextDelta))
    assert shown == "count.txt holds 3."  # the held-back answer was never shown
    note = sent(session).sent[1].messages[-1].content
    assert "it asks for count.txt, and it does not exist yet" in note
    assert alternation_problems(session.history) == []


def test_the_second_answer_stands_even_if_the_file_is_still_missing(tmp_path: Path) -> None:
    session = _session(tmp_path, '{"answer": "3"}', '{"answer": "I cannot write it."}')
    assert session.chat("Write the number 3 to three.txt") == "I cannot write it."
    assert len(sent(session).sent) == 2


def test_a_question_is_answered_at_once(tmp_path: Path) -> None:
    session = _session(tmp_path, '{"answer": "It does not exist."}')
    assert session.chat("Is there a notes.txt here?") == "It does not exist."
    assert len(sent(session).sent) == 1


def test_an_answer_while_the_asked_for_file_is_empty_is_held_back_once(tmp_path: Path) -> None:
    # The command's output went to the file, and it printed nothing: the model is asked to
    # check before it answers; the second answer stands, whatever it says.
    write = {"tool": "fs_write", "arguments": {"path": "result.txt", "content": ""}}
    session = _session(
        tmp_path,
        json.dumps(write),
        '{"answer": "result.txt holds the result."}',
        '{"answer": "result.txt is empty: the script printed nothing."}',
    )
    reply = session.chat("Run the script and save its output to result.txt")
    assert reply == "result.txt is empty: the script printed nothing."
    note = sent(session).sent[2].messages[-1].content
    assert "result.txt is empty" in note and "Check the work before answering" in note
    assert still_empty(("result.txt", "missing.txt"), tmp_path) == ("result.txt",)
    (tmp_path / "result.txt").write_text("3\n")
    assert still_empty(("result.txt",), tmp_path) == ()
