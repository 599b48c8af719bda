"""The agent loop: limits, loop detection, tool errors for the model, clean stops."""

from __future__ import annotations

import json

import pytest
from agentutil import EventLog, call, scripted_session, sent

from conch.agent import IterationLimit, Limits, LoopDetected, Pruned, TurnFinished
from conch.agent.conversation import alternation_problems
from conch.agent.events import AgentEvent, ToolStarted
from conch.errors import ProviderError
from conch.messages import Finished, Message, TextDelta, ToolCall
from conch.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def explode(reason: str) -> str:
    """Fail on purpose."""
    raise RuntimeError(f"it broke: {reason}")


@tool
def chatter(n: int) -> str:
    """Print a lot."""
    return "line\n" * n


@tool
def stop_here(where: str) -> str:
    """Act as if the user pressed Ctrl+C while the tool runs."""
    raise KeyboardInterrupt


def test_a_tool_result_goes_back_to_the_model_and_the_answer_comes_out() -> None:
    session = scripted_session(call("add", a=2, b=40), "It is 42.", tools=(add,))
    events: list[AgentEvent] = []
    assert session.chat("2 + 40?", on_event=events.append) == "It is 42."
    kinds = [type(e).__name__ for e in events]
    assert kinds[kinds.index("ToolStarted") :].count("ToolFinished") == 1
    assert isinstance(events[-1], TurnFinished)
    assert events[-1].iterations == 2
    second = sent(session).sent[1].messages
    assert second[-1] == Message("tool", "42", tool_call_id="c1", name="add")
    assert [m.role for m in session.history] == ["user", "assistant", "tool", "assistant"]


def test_the_iteration_limit_ends_the_turn_with_a_typed_error_and_a_valid_history() -> None:
    replies = [call("add", str(n), a=n, b=1) for n in range(5)]
    session = scripted_session(*replies, tools=(add,), limits=Limits(max_iterations=3))
    with pytest.raises(IterationLimit) as raised:
        session.chat("count forever")
    assert raised.value.limit == 3
    assert len(sent(session).sent) == 3
    assert session.history[-1].content == "[stopped: no final answer within 3 model replies]"
    assert alternation_problems(session.messages) == []


def test_an_unknown_tool_bad_arguments_and_a_raising_tool_are_errors_the_model_reads() -> None:
    replies = [
        '{"tool": "nope", "arguments": {}}',
        '{"tool": "add", "arguments": {"a": "two", "b": 1}}',
        '{"tool": "explode", "arguments": {"reason": "disk\\nfull"}}',
        '{"answer": "I could not do it."}',
    ]
    session = scripted_session(
        *replies, tools=(add, explode), tool_calls="json", limits=Limits(max_retries=0)
    )
    log = EventLog()
    assert session.chat("try", on_event=log) == "I could not do it."
    texts = [f.result.content for f in log.finished]
    assert all(f.result.is_error for f in log.finished)
    assert texts[0].startswith("Error: no tool named 'nope' (tools: add, explode)")
    assert texts[1].startswith("Error: bad arguments: a: ")
    assert texts[2] == "Error: RuntimeError: it broke: disk full"
    last_request = sent(session).sent[-1].messages
    assert "Result of explode:\nError: RuntimeError" in last_request[-1].content


def test_a_long_result_is_cut_with_a_note() -> None:
    session = scripted_session(
        call("chatter", n=5000), "ok", tools=(chatter,), limits=Limits(max_result_chars=1000)
    )
    log = EventLog()
    session.chat("talk", on_event=log)
    (done,) = log.finished
    assert done.truncated and done.original_size == 25_000
    assert len(done.result.content) < 1200
    assert "output truncated: 24000 of 25000 characters left out" in done.result.content
    assert session.history[2].content == done.result.content


def test_the_same_call_repeated_is_stopped_with_a_note_then_ends_the_run() -> None:
    same = [call("add", str(n), a=1, b=1) for n in range(6)]
    session = scripted_session(*same, tools=(add,), limits=Limits(max_repeats=2, max_blocked=1))
    log = EventLog()
    with pytest.raises(LoopDetected) as raised:
        session.chat("loop", on_event=log)
    assert raised.value.call.name == "add"
    contents = [r.result.content for r in log.finished]
    assert contents[:2] == ["2", "2"]
    assert contents[2].startswith("Error: Not run: you already called add with exactly these")
    assert len(contents) == 4
    assert session.history[-1].content == "[stopped: the same tool call kept repeating]"
    assert alternation_problems(session.messages) == []


def test_a_repeat_with_other_arguments_is_not_a_loop() -> None:
    replies = [call("add", str(n), a=n, b=1) for n in range(4)] + ["done"]
    session = scripted_session(*replies, tools=(add,))
    assert session.chat("go") == "done"


def test_ctrl_c_in_a_tool_leaves_every_call_answered() -> None:
    both = [
        call("add", "c1", a=1, b=2),
        call("stop_here", "c2", where="x"),
        call("add", "c3", a=3, b=4),
    ]
    session = scripted_session(both, tools=(add, stop_here))
    with pytest.raises(KeyboardInterrupt):
        session.chat("go")
    history = session.history
    assert [m.tool_call_id for m in history if m.role == "tool"] == ["c1", "c2", "c3"]
    assert history[-1] == Message("assistant", "[interrupted by the user]")
    assert alternation_problems(session.messages) == []


def test_ctrl_c_while_the_model_streams_keeps_what_it_said() -> None:
    session = scripted_session("Hello there", KeyboardInterrupt(), "fine")
    assert session.chat("hi") == "Hello there"
    with pytest.raises(KeyboardInterrupt):
        session.chat("again")
    assert session.history[-1] == Message("assistant", "[interrupted by the user]")
    assert session.chat("third") == "fine"
    assert alternation_problems(session.messages) == []


def test_ctrl_c_in_an_event_callback_ends_the_turn_cleanly() -> None:
    session = scripted_session("A long answer that streams in pieces")

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, TextDelta) and "long" in event.text:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        session.chat("hi", on_event=on_event)
    assert session.history[-1].content == "A long a\n[interrupted by the user]"
    assert alternation_problems(session.messages) == []


def test_leaving_the_stream_early_ends_the_turn_cleanly() -> None:
    session = scripted_session(call("add", a=1, b=2), "next", tools=(add,))
    for event in session.stream("go"):
        if isinstance(event, ToolStarted):
            break
    assert session.chat("and now") == "next"
    assert alternation_problems(session.messages) == []
    assert session.history[2].content.startswith("Error: not run")
    assert [m.role for m in session.history] == [
        "user", "assistant", "tool", "assistant", "user", "assistant"
    ]  # fmt: skip


def test_a_provider_error_ends_the_turn_with_a_note() -> None:
    session = scripted_session(ProviderError("server down"))
    with pytest.raises(ProviderError):
        session.chat("hi")
    assert session.history[-1] == Message("assistant", "[stopped: server down]")


def test_json_steps_stream_only_the_answer_text() -> None:
    session = scripted_session(
        '{"tool": "add", "arguments": {"a": 1, "b": 2}}',
        '{"answer": "The sum is 3."}',
        tools=(add,),
        tool_calls="json",
    )
    deltas: list[str] = []
    assert session.chat("1+2", on_token=deltas.append) == "The sum is 3."
    assert "".join(deltas) == "The sum is 3."
    request = sent(session).sent[0]
    assert request.tools is None
    assert request.options.json_schema is not None
    assert [m.role for m in sent(session).sent[1].messages] == [
        "system",
        "user",
        "assistant",
        "user",
    ]


def test_plain_text_from_a_json_step_model_is_its_answer() -> None:
    session = scripted_session("Just text, no JSON.", tools=(add,), tool_calls="json")
    deltas: list[str] = []
    assert session.chat("hi", on_token=deltas.append) == "Just text, no JSON."
    assert "".join(deltas) == "Just text, no JSON."


def test_a_native_model_that_writes_a_tagged_call_still_gets_its_tool_run() -> None:
    tagged = '<tool_call>\n{"name": "add", "arguments": {"a": 5, "b": 5}}\n</tool_call>'
    session = scripted_session(tagged, "ten", tools=(add,))
    assert session.chat("5+5") == "ten"
    assert session.history[2].content == "10"


def test_the_legacy_python3_name_reaches_evaluate() -> None:
    @tool(name="evaluate")
    def fake_evaluate(code: str) -> str:
        """Pretend to run code."""
        return f"ran {code}"

    step = '{"tool": "python3", "arguments": {"code": "print(1)"}}'
    session = scripted_session(step, '{"answer": "1"}', tools=(fake_evaluate,), tool_calls="json")
    assert session.chat("run it") == "1"
    assert session.history[1].tool_calls[0].name == "evaluate"
    assert session.history[2].content == "ran print(1)"


def test_a_long_conversation_is_pruned_between_replies() -> None:
    replies: list[str | ToolCall] = [call("chatter", str(n), n=n + 200) for n in range(8)]
    session = scripted_session(
        *replies, "done", tools=(chatter,), context_tokens=2048, keep_turns=2,
        limits=Limits(max_iterations=20),
    )  # fmt: skip
    events: list[AgentEvent] = []
    assert session.chat("fill the context", on_event=events.append) == "done"
    pruned = [e for e in events if isinstance(e, Pruned)]
    assert pruned
    last = sent(session).sent[-1].messages
    assert last[1] == Message("user", "fill the context")
    assert sum("dropped to fit the context" in m.content for m in last) == 1
    assert alternation_problems(last) == []


def test_usage_adds_up_over_the_replies_of_a_turn() -> None:
    session = scripted_session(call("add", a=1, b=1), "two", tools=(add,))
    events: list[AgentEvent] = []
    session.chat("1+1", on_event=events.append)
    finished = [e for e in events if isinstance(e, Finished)]
    turn = events[-1]
    assert isinstance(turn, TurnFinished)
    assert turn.usage.prompt_tokens == sum(f.usage.prompt_tokens for f in finished)
    assert json.loads(session.history[1].tool_calls[0].arguments) == {"a": 1, "b": 1}


def test_an_answer_right_after_a_failure_is_held_back_once_and_the_model_tries_again() -> None:
    replies = [
        '{"tool": "add", "arguments": {"a": "two", "b": 1}}',
        '{"answer": "Error: bad arguments."}',  # giving up on the first error
        '{"tool": "add", "arguments": {"a": 2, "b": 1}}',
        '{"answer": "3"}',
    ]
    session = scripted_session(*replies, tools=(add,), tool_calls="json")
    log = EventLog()
    assert session.chat("add two and one", on_event=log) == "3"
    shown = "".join(e.text for e in log.events if isinstance(e, TextDelta))
    assert shown == "3"  # the held-back answer was never shown
    retry = sent(session).sent[2].messages[-1].content
    assert 'The last add call failed, so "add two and one" is not done yet.' in retry
    assert alternation_problems(session.history) == []


def test_the_second_answer_after_a_failure_stands() -> None:
    replies = [
        '{"tool": "explode", "arguments": {"reason": "no"}}',
        '{"answer": "It broke."}',
        '{"tool": "explode", "arguments": {"reason": "again"}}',
        '{"answer": "It broke again."}',
    ]
    session = scripted_session(*replies, tools=(explode,), tool_calls="json")
    reply = session.chat("try")  # one retry per turn, not more
    assert reply.splitlines() == ["It broke again.", "[explode failed: it broke: again]"]
