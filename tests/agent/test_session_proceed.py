"""``Session.proceed``: a turn on a restored history, without a new message."""

from __future__ import annotations

import pytest

from conch import Session
from conch.messages import Message, ToolCall
from conch.providers.scripted import ScriptedProvider


def _session(provider: ScriptedProvider) -> Session:
    return Session(provider).with_default_tools(False)


def test_proceed_answers_tool_results_that_ran_outside_the_session() -> None:
    provider = ScriptedProvider.of("It is sunny in Paris.")
    session = _session(provider)
    call = ToolCall("c1", "get_weather", '{"city": "Paris"}')
    session.restore(
        [
            Message("user", "Weather in Paris?"),
            Message("assistant", "", tool_calls=(call,)),
            Message("tool", "sunny", tool_call_id="c1", name="get_weather"),
        ]
    )
    events = session.proceed()
    with pytest.raises(StopIteration) as stop:
        while True:
            next(events)
    assert stop.value.value == "It is sunny in Paris."
    assert provider.sent[0].messages[-1].content == "sunny"
    assert [m.role for m in session.history] == ["user", "assistant", "tool", "assistant"]


def test_proceed_answers_a_restored_user_message_without_adding_another() -> None:
    provider = ScriptedProvider.of("Hello.")
    session = _session(provider)
    session.restore([Message("user", "Hi")])
    list(session.proceed())
    assert [m.content for m in session.history] == ["Hi", "Hello."]


def test_proceed_refuses_a_history_that_ends_with_an_answer() -> None:
    session = _session(ScriptedProvider.of())
    session.restore([Message("user", "Hi"), Message("assistant", "Hello.")])
    with pytest.raises(ValueError, match="nothing to answer"):
        session.proceed()
    with pytest.raises(ValueError, match="nothing to answer"):
        _session(ScriptedProvider.of()).proceed()
