"""Session: the fluent API, the system prompt it builds, and what keeps or clears history."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from agentutil import call, scripted_session, sent

from conch.agent import Session, ToolOptions, TurnFinished, native_tool_calls
from conch.agent.events import AgentEvent
from conch.agent.system import DEFAULT_BASE
from conch.messages import Message, TextDelta
from conch.providers.scripted import ScriptedProvider
from conch.tools import tool

NOON = datetime(2026, 5, 27, 12, 0, tzinfo=UTC)


@tool(trigger="Shout a word.", system="SHOUT RULES: only when asked.")
def shout(word: str) -> str:
    """Shout a word."""
    return word.upper()


@tool
def whisper(word: str) -> str:
    """Whisper a word."""
    return word.lower()


def _system_sent(session: Session, request: int = -1) -> str:
    return sent(session).sent[request].messages[0].content


def test_the_built_in_base_can_be_replaced_dropped_and_appended_to() -> None:
    session = scripted_session("a").system("BASE ONE").system_append("APPEND ONE")
    session.system_append(lambda: "APPEND TWO")
    prompt = session.render_system()
    assert prompt.startswith("BASE ONE\n\nAPPEND ONE\n\nAPPEND TWO\n\n")
    assert DEFAULT_BASE not in prompt
    scratch = scripted_session("a").no_builtin_system().system_append("ONLY ME")
    assert scratch.render_system().startswith("ONLY ME\n\n")
    assert DEFAULT_BASE in scripted_session("a").render_system()


def test_the_prompt_rendered_is_the_prompt_sent() -> None:
    session = scripted_session("hello").preamble_options(now=lambda: NOON)
    expected = session.render_system()
    session.chat("hi")
    assert _system_sent(session) == expected
    assert "DATE: Wednesday 2026-05-27" in expected


def test_refresh_system_keeps_history_and_recomputes_callable_appends() -> None:
    state = {"mood": "calm"}
    session = scripted_session("one", "two").system_append(lambda: f"MOOD: {state['mood']}")
    session.chat("first")
    state["mood"] = "busy"
    session.chat("second")
    assert "MOOD: calm" in _system_sent(session)  # not yet refreshed
    session.refresh_system()
    assert "MOOD: busy" in session.render_system()
    assert [m.content for m in session.history] == ["first", "one", "second", "two"]


def test_set_system_clears_history_and_replaces_the_base() -> None:
    session = scripted_session("one", "two")
    session.chat("first")
    session.set_system("NEW BASE")
    assert session.history == ()
    session.chat("second")
    assert _system_sent(session).startswith("NEW BASE")
    assert [m.content for m in sent(session).sent[-1].messages[1:]] == ["second"]


def test_reset_clears_history_and_keeps_the_prompt() -> None:
    session = scripted_session("one", "two").system("KEPT")
    session.chat("first")
    session.reset()
    assert session.history == ()
    session.chat("second")
    assert _system_sent(session).startswith("KEPT")
    assert len(sent(session).sent[-1].messages) == 2


def test_a_tool_added_before_the_first_turn_is_queued() -> None:
    session = scripted_session(call("shout", word="hi"), "HI it is").add_tool(shout)
    assert session.chat("shout hi") == "HI it is"
    first = sent(session).sent[0]
    assert [t.name for t in first.tools or []] == ["shout"]
    assert "SHOUT RULES" in first.messages[0].content


def test_a_tool_added_after_the_first_turn_keeps_history_and_joins_the_prompt() -> None:
    session = scripted_session("plain", call("whisper", word="HI"), "hi, quietly", tools=(shout,))
    session.chat("hello")
    session.add_tool(whisper)
    assert session.chat("whisper HI") == "hi, quietly"
    request = sent(session).sent[1]
    assert [t.name for t in request.tools or []] == ["shout", "whisper"]
    assert "- whisper: Whisper a word." in request.messages[0].content
    assert [m.content for m in request.messages[1:3]] == ["hello", "plain"]


def test_a_tool_name_can_be_offered_only_once() -> None:
    session = scripted_session("a", tools=(shout,))
    with pytest.raises(ValueError, match="already offered"):
        session.add_tool(shout)
    session.chat("x")
    with pytest.raises(ValueError, match="already offered"):
        session.add_tool(shout)


def test_the_stream_form_yields_events_and_ends_with_the_turn() -> None:
    session = scripted_session("streamed reply")
    events: list[AgentEvent] = list(session.stream("hi"))
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "streamed reply"
    assert events[-1] == TurnFinished("streamed reply", 1, events[-1].usage)  # type: ignore[union-attr]


def test_chat_hands_out_tokens_and_events() -> None:
    session = scripted_session("token by token")
    tokens: list[str] = []
    events: list[AgentEvent] = []
    assert session.chat("hi", on_event=events.append, on_token=tokens.append) == "token by token"
    assert "".join(tokens) == "token by token"
    assert isinstance(events[-1], TurnFinished)


def test_the_default_toolset_and_tool_lookup() -> None:
    session = Session(ScriptedProvider.of(call("tool_lookup", name="datetime"), "ok"))
    names = [t.name for t in session.tools]
    assert names[0] == "plan" and names[-1] == "tool_lookup"
    assert {"plan", "datetime"} <= set(names) and "web_fetch" not in names
    assert "bash" not in names  # only when asked for
    session.chat("what tools?")
    manual = session.history[2].content
    assert manual.startswith("## datetime\n")
    assert "Parameters (JSON schema):" in manual
    assert 'call tool_lookup with name="<tool>"' in session.render_system()


def test_the_embedded_model_writes_json_steps_and_others_call_natively() -> None:
    assert not native_tool_calls(ScriptedProvider(name="local"))
    assert native_tool_calls(ScriptedProvider())
    assert Session.local().json_steps
    assert not Session(ScriptedProvider()).json_steps
    assert Session(ScriptedProvider(), tool_calls="json").json_steps
    assert not Session(ScriptedProvider(name="local"), tool_calls="native").json_steps


def test_a_provider_can_say_whether_it_calls_tools_natively() -> None:
    class Plain(ScriptedProvider):
        native_tool_calls = False

    assert not native_tool_calls(Plain())


def test_a_remote_session_connects_only_when_it_is_used() -> None:
    with Session.remote("http://127.0.0.1:9/v1", "qwen") as session:
        assert session.provider.name == "openai"
        assert "You are conch" in session.render_system()


def test_the_history_lists_the_turns_and_messages_add_the_system_prompt() -> None:
    session = scripted_session("reply")
    session.chat("hi")
    assert session.history == (Message("user", "hi"), Message("assistant", "reply"))
    assert session.messages[0].role == "system"
    assert session.messages[1:] == list(session.history)


def test_default_tools_turned_off_after_the_first_turn_keep_the_history() -> None:
    session = Session(ScriptedProvider.of("one", "two"))
    session.chat("first")
    assert "datetime" in [t.name for t in session.tools]
    session.with_default_tools(False).add_tool(shout)
    session.chat("second")
    request = sent(session).sent[-1]
    assert [t.name for t in request.tools or []] == ["shout"]
    assert [m.content for m in request.messages[1:]] == ["first", "one", "second"]


def test_a_session_from_settings_uses_the_provider_they_name() -> None:
    from conch.config.settings import AISettings, Settings

    settings = Settings(ai=AISettings(provider="scripted", script=["from settings"]))
    session = Session.from_settings(settings).with_default_tools(False)
    assert session.chat("hi") == "from settings"


def test_the_memory_vocabulary_follows_what_memory_saved(tmp_path: Path) -> None:
    options = ToolOptions(memory_dir=tmp_path / "memory", web=False)
    session = Session(ScriptedProvider.of("noted"), tools=options)
    assert "MEMORY VOCABULARY (keywords of saved entries): (no entries yet)" in (
        session.render_system()
    )
    (memory,) = [t for t in session.tools if t.name == "memory"]
    memory.function(action="append", keywords="sockets python", content="Use timeouts.")
    prompt = session.render_system()
    assert prompt.index("MEMORY VOCABULARY") > prompt.index("DATE:")
    assert "python" in prompt.split("MEMORY VOCABULARY", 1)[1]
