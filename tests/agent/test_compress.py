"""Session.compress: the model writes a recap, and the recap replaces the conversation."""

from __future__ import annotations

import pytest
from agentutil import call, scripted_session, sent

from conch.agent.compress import RECAP_REQUEST, RECAP_SYSTEM, transcript
from conch.errors import ModelOutputError
from conch.messages import Message, TextDelta, ToolCall
from conch.tools import tool


@tool(trigger="Count the lines of a file.")
def count_lines(path: str) -> str:
    """Count the lines of a file."""
    return f"{path}: 42 lines"


def test_compress_replaces_the_conversation_with_the_recap_the_model_wrote() -> None:
    session = scripted_session(
        [call("count_lines", path="notes.txt")],
        "notes.txt has 42 lines.",
        "The user asked how long notes.txt is: 42 lines.",
        "It has 42 lines.",
        tools=(count_lines,),
    )
    session.chat("how long is notes.txt?")
    events: list[object] = []
    recap = session.compress(on_event=events.append)
    assert recap == "The user asked how long notes.txt is: 42 lines."
    assert session.history == (
        Message("user", RECAP_REQUEST),
        Message("assistant", recap),
    )
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == recap
    # The model was asked with a system prompt of its own, no tools, and the transcript.
    asked = sent(session).sent[-1]
    assert asked.tools is None
    assert asked.messages[0] == Message("system", RECAP_SYSTEM)
    request = asked.messages[1].content
    assert "User: how long is notes.txt?" in request
    assert '{"tool": "count_lines", "arguments": {"path": "notes.txt"}}' in request
    assert "Result of count_lines: notes.txt: 42 lines" in request
    assert "Assistant: notes.txt has 42 lines." in request
    # The next turn goes on from the recap.
    session.chat("and in words?")
    following = sent(session).sent[-1].messages
    assert [m.content for m in following[1:]] == [RECAP_REQUEST, recap, "and in words?"]


def test_nothing_to_compress_asks_the_model_nothing() -> None:
    session = scripted_session()
    assert session.compress() is None
    assert sent(session).sent == []


def test_an_empty_recap_keeps_the_conversation() -> None:
    session = scripted_session("first answer", "   ")
    session.chat("question")
    before = session.history
    with pytest.raises(ModelOutputError, match="no recap"):
        session.compress()
    assert session.history == before


def test_the_transcript_keeps_the_first_message_and_the_latest_that_fit() -> None:
    history = [Message("user", "the original task")]
    for n in range(20):
        history += [Message("user", f"question {n} " + "x" * 80), Message("assistant", f"a{n}")]
    text = transcript(history, 600)
    assert text.startswith("User: the original task\n\n[... ")
    assert "earlier messages left out ...]" in text
    assert "question 19" in text and "question 0 " not in text
    assert len(text) <= 700


def test_a_long_message_is_clipped_in_the_middle() -> None:
    long = "start " + "y" * 5000 + " end"
    text = transcript([Message("user", long)], 100_000)
    assert text.startswith("User: start ") and text.endswith(" end") and "[...]" in text
    assert len(text) < 2100


def test_tool_calls_without_text_are_written_as_steps() -> None:
    history = [
        Message("user", "go"),
        Message("assistant", "", (ToolCall("c1", "fs_list", '{"path": "."}'),)),
        Message("tool", "a.txt", tool_call_id="c1", name="fs_list"),
    ]
    assert transcript(history, 10_000).splitlines() == [
        "User: go",
        "",
        'Assistant: {"tool": "fs_list", "arguments": {"path": "."}}',
        "",
        "Result of fs_list: a.txt",
    ]
