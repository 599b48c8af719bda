"""The conversation: tokens, pruning to a budget with one summary line, valid roles."""

from __future__ import annotations

import pytest

from conch.agent.conversation import (
    Conversation,
    alternation_problems,
    estimate_tokens,
    message_tokens,
    tokenizer_counter,
)
from conch.errors import ProviderError
from conch.messages import Message, ToolCall, ToolResult


def _tool_turn(conversation: Conversation, n: int, size: int = 400) -> None:
    call = ToolCall(f"c{n}", "fs_read" if n % 2 else "bash", f'{{"n": {n}}}')
    conversation.add(Message("assistant", "", (call,)))
    conversation.add(ToolResult(call.id, call.name, "x" * size).to_message())


def _long_task(turns: int = 12) -> Conversation:
    conversation = Conversation("SYSTEM", keep_turns=3)
    conversation.add(Message("user", "ORIGINAL INSTRUCTION"))
    for n in range(turns):
        _tool_turn(conversation, n)
    return conversation


def test_tokens_are_estimated_at_four_characters_each_without_a_tokenizer() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert message_tokens(Message("user", "a" * 40)) == 10 + 4


def test_a_tokenizer_is_asked_once_per_text_and_estimated_where_it_cannot_say() -> None:
    asked: list[str] = []

    def tokenizer(text: str) -> int | None:
        asked.append(text)
        if text == "not loaded":
            return None
        if text == "broken":
            raise ProviderError("the model service went away")
        return len(text.split())

    counter = tokenizer_counter(tokenizer)
    assert counter("one two three") == 3
    assert counter("one two three") == 3
    assert counter("") == 0
    assert counter("not loaded") == estimate_tokens("not loaded")
    assert counter("broken") == estimate_tokens("broken")
    assert counter("not loaded") == estimate_tokens("not loaded")
    # Remembered only what the tokenizer counted; a text it could not count is asked again.
    assert asked == ["one two three", "not loaded", "broken", "not loaded"]


def test_the_counter_is_pluggable() -> None:
    conversation = Conversation("one two three", counter=lambda text: len(text.split()))
    conversation.add(Message("user", "four five"))
    assert conversation.tokens() == 3 + 4 + 2 + 4


def test_a_conversation_within_its_budget_is_left_alone() -> None:
    conversation = _long_task(2)
    assert conversation.prune(10_000) is None
    assert len(conversation.messages) == 5


def test_pruning_keeps_the_instruction_and_the_last_turns_and_adds_one_summary() -> None:
    conversation = _long_task()
    before = conversation.messages
    pruned = conversation.prune(600)
    assert pruned is not None
    after = conversation.messages
    assert after[0] == Message("user", "ORIGINAL INSTRUCTION")
    summaries = [m for m in after if "dropped to fit the context" in m.content]
    assert len(summaries) == 1
    assert after[1] is summaries[0]
    assert after[-6:] == before[-6:]  # the last three turns, calls with their results
    assert pruned.dropped == len(before) - len(after) + 1
    assert pruned.tokens_after < pruned.tokens_before
    assert conversation.tokens() <= 600
    assert "tool calls: " in pruned.summary
    assert alternation_problems(conversation.wire()) == []


def test_pruning_again_folds_the_old_summary_into_one_line() -> None:
    conversation = _long_task()
    first = conversation.prune(900)
    assert first is not None
    for n in range(12, 20):
        _tool_turn(conversation, n)
    second = conversation.prune(900)
    assert second is not None
    summaries = [m for m in conversation.messages if "dropped to fit the context" in m.content]
    assert len(summaries) == 1
    assert summaries[0].content == second.summary
    assert int(second.summary.split()[0].lstrip("[")) > int(first.summary.split()[0].lstrip("["))


def test_the_current_instruction_survives_pruning_too() -> None:
    conversation = _long_task(4)
    conversation.add(Message("assistant", "first task done"))
    conversation.add(Message("user", "CURRENT INSTRUCTION"))
    for n in range(4, 14):
        _tool_turn(conversation, n)
    assert conversation.prune(700) is not None
    contents = [m.content for m in conversation.messages]
    assert "ORIGINAL INSTRUCTION" in contents
    assert "CURRENT INSTRUCTION" in contents
    assert alternation_problems(conversation.wire()) == []


def test_the_request_being_worked_on_survives_pruning_behind_the_loop_s_notes() -> None:
    conversation = Conversation("SYSTEM", keep_turns=3)
    conversation.add_request("FIRST QUESTION")
    conversation.add(Message("assistant", "first answer"))
    conversation.add_request("CURRENT REQUEST")
    for n in range(10):
        _tool_turn(conversation, n)
    conversation.add(Message("assistant", "an answer held back"))
    conversation.add(Message("user", "a note from the loop: not done yet"))
    assert conversation.request_text() == "CURRENT REQUEST"
    assert conversation.prune(700) is not None
    contents = [m.content for m in conversation.messages]
    assert "CURRENT REQUEST" in contents and "FIRST QUESTION" in contents
    assert contents[-1] == "a note from the loop: not done yet"
    assert alternation_problems(conversation.wire()) == []


def test_a_restored_conversation_s_request_is_its_last_user_message() -> None:
    conversation = Conversation("SYSTEM")
    assert conversation.request is None
    conversation.add(Message("user", "one"))
    conversation.add(Message("assistant", "1"))
    conversation.add(Message("user", "two"))
    assert conversation.request_text() == "two"
    conversation.clear()
    assert conversation.request_text() is None


def test_nothing_is_dropped_when_everything_is_protected() -> None:
    conversation = Conversation("S" * 4000, keep_turns=5)
    conversation.add(Message("user", "do it"))
    _tool_turn(conversation, 1)
    assert conversation.prune(10) is None


def test_closing_a_turn_answers_every_dangling_call_and_ends_with_the_assistant() -> None:
    conversation = Conversation("sys")
    conversation.add(Message("user", "go"))
    calls = (ToolCall("a", "bash", "{}"), ToolCall("b", "bash", "{}"))
    conversation.add(Message("assistant", "", calls))
    conversation.add(ToolResult("a", "bash", "ok").to_message())
    assert alternation_problems(conversation.wire())  # "b" has no result yet
    conversation.close_turn("[interrupted by the user]")
    messages = conversation.messages
    assert messages[-2].tool_call_id == "b"
    assert messages[-2].content.startswith("Error: not run")
    assert messages[-1] == Message("assistant", "[interrupted by the user]")
    assert alternation_problems(conversation.wire()) == []
    conversation.close_turn("again")
    assert conversation.messages == messages


def test_alternation_problems_are_found() -> None:
    two_users = [Message("user", "a"), Message("user", "b")]
    assert alternation_problems(two_users) == ["message 1: two user messages in a row"]
    orphan = [Message("user", "a"), Message("tool", "x", tool_call_id="zz")]
    assert alternation_problems(orphan) == ["message 1: a tool result without its call just before"]
    late_system = [Message("user", "a"), Message("system", "b")]
    assert alternation_problems(late_system) == ["message 1: a system message after the first"]


def test_a_system_message_cannot_be_added_to_the_history() -> None:
    with pytest.raises(ValueError, match="system"):
        Conversation().add(Message("system", "no"))
