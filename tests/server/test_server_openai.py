"""The official ``openai`` client against ``conch serve`` on 127.0.0.1 (a real uvicorn)."""

from __future__ import annotations

import json
from collections.abc import Callable

import openai
from serverutil import TOKEN, WEATHER

from conch.messages import ToolCall
from conch.providers.scripted import ScriptedProvider

Server = Callable[..., str]


def _client(base: str, key: str = TOKEN) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0, timeout=30)


def test_the_openai_client_gets_a_whole_reply(server_for: Server) -> None:
    client = _client(server_for(ScriptedProvider.of("Hello from conch.")))
    reply = client.chat.completions.create(
        model="test-model", messages=[{"role": "user", "content": "hi"}], max_completion_tokens=20
    )
    assert reply.choices[0].message.content == "Hello from conch."
    assert reply.choices[0].finish_reason == "stop"
    assert reply.usage is not None and reply.usage.total_tokens > 0


def test_the_openai_client_streams_past_conch_s_extra_chunks(server_for: Server) -> None:
    provider = ScriptedProvider.of(ToolCall("c1", "datetime", "{}"), "It is noon.")
    client = _client(server_for(provider))
    stream = client.chat.completions.create(
        model="test-model",
        messages=[{"role": "user", "content": "time?"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "It is noon."
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    extras = [
        c.model_extra["conch"]["type"] for c in chunks if c.model_extra and "conch" in c.model_extra
    ]
    assert extras == ["conch.tool_call", "conch.tool_result"]


def test_the_openai_client_runs_its_own_tool_and_gets_the_answer(server_for: Server) -> None:
    provider = ScriptedProvider.of(
        ToolCall("x", "get_weather", '{"city": "Lisbon"}'), "Lisbon is sunny today."
    )
    client = _client(server_for(provider))
    messages: list[dict[str, object]] = [{"role": "user", "content": "Weather in Lisbon?"}]
    first = client.chat.completions.create(
        model="test-model",
        messages=messages,
        tools=[WEATHER],
        tool_choice="auto",  # type: ignore[arg-type,list-item]
    )
    assert first.choices[0].finish_reason == "tool_calls"
    [call] = first.choices[0].message.tool_calls or []
    assert call.function.name == "get_weather"
    assert json.loads(call.function.arguments) == {"city": "Lisbon"}
    messages.append(first.choices[0].message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": "sunny, 24 C"})
    second = client.chat.completions.create(model="test-model", messages=messages, tools=[WEATHER])  # type: ignore[arg-type]
    assert second.choices[0].message.content == "Lisbon is sunny today."


def test_the_openai_client_streams_a_client_tool_call(server_for: Server) -> None:
    provider = ScriptedProvider.of(ToolCall("x", "get_weather", '{"city": "Rome"}'))
    client = _client(server_for(provider))
    stream = client.chat.completions.create(
        model="test-model",
        messages=[{"role": "user", "content": "Weather in Rome?"}],
        tools=[WEATHER],  # type: ignore[list-item]
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
        stream=True,
    )
    calls = [tc for c in stream if c.choices for tc in c.choices[0].delta.tool_calls or []]
    assert [(tc.index, tc.function.name if tc.function else None) for tc in calls] == [
        (0, "get_weather")
    ]


def test_the_openai_client_reads_an_api_error(server_for: Server) -> None:
    client = _client(server_for(ScriptedProvider.of("x")))
    try:
        client.chat.completions.create(
            model="test-model", messages=[{"role": "robot", "content": "x"}]
        )  # type: ignore[misc,list-item]
    except openai.BadRequestError as exc:
        assert "unknown role" in exc.message
    else:
        raise AssertionError("a bad role was accepted")
