"""Reading an OpenAI chat-completions request: what is accepted, and each error's shape."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conch.messages import Message, ToolCall
from conch.server.config import Caps
from conch.server.wire import APIError, parse_request

CAPS = Caps()


def _parse(**body: Any) -> Any:
    body.setdefault("messages", [{"role": "user", "content": "hi"}])
    return parse_request(json.dumps(body).encode(), CAPS)


def _error(raw: bytes | dict[str, Any], caps: Caps = CAPS) -> APIError:
    data = raw if isinstance(raw, bytes) else json.dumps(raw).encode()
    with pytest.raises(APIError) as caught:
        parse_request(data, caps)
    return caught.value


def test_a_plain_request_becomes_the_history_with_defaults() -> None:
    request = _parse(model="m", messages=[{"role": "user", "content": "hello"}])
    assert request.model == "m"
    assert request.history == [Message("user", "hello")]
    assert (request.stream, request.include_usage, request.tool_choice) == (False, False, "auto")
    assert request.events is None and request.progress is True


def test_system_and_developer_messages_are_kept_apart_from_the_history() -> None:
    request = _parse(
        messages=[
            {"role": "system", "content": "Be brief."},
            {"role": "developer", "content": "Use metric units."},
            {"role": "user", "content": "hi"},
        ]
    )
    assert request.system == ["Be brief.", "Use metric units."]
    assert [m.role for m in request.history] == ["user"]


def test_text_parts_are_joined_and_neighbouring_user_messages_merged() -> None:
    request = _parse(
        messages=[
            {
                "role": "user",
                "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
            },
            {"role": "user", "content": "c"},
        ]
    )
    assert request.history == [Message("user", "ab\n\nc")]


def test_a_tool_result_after_the_client_s_tool_call_ends_the_history() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    request = _parse(
        messages=[
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "42"},
        ]
    )
    assert request.history[1] == Message(
        "assistant", "", tool_calls=(ToolCall("call_1", "f", "{}"),)
    )
    assert request.history[2] == Message("tool", "42", tool_call_id="call_1", name="f")


def test_max_completion_tokens_wins_over_max_tokens() -> None:
    assert _parse(max_tokens=50).max_tokens == 50
    assert _parse(max_tokens=50, max_completion_tokens=70).max_tokens == 70


def test_tool_choice_in_object_form_names_the_one_tool() -> None:
    choice = {"type": "function", "function": {"name": "get_weather"}}
    assert _parse(tool_choice=choice).tool_choice == "get_weather"
    assert _parse(tool_choice="none").tool_choice == "none"


@pytest.mark.parametrize(
    ("response_format", "schema"),
    [
        ({"type": "text"}, None),
        ({"type": "json_object"}, {"type": "object"}),
        (
            {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "array"}}},
            {"type": "array"},
        ),
    ],
)
def test_response_format_becomes_the_reply_s_json_schema(
    response_format: dict[str, Any], schema: dict[str, Any] | None
) -> None:
    assert _parse(response_format=response_format).json_schema == schema


def test_stream_options_switch_the_extra_events() -> None:
    request = _parse(
        stream=True,
        stream_options={
            "include_usage": True,
            "conch_events": True,
            "conch_prompt_progress": False,
        },
    )
    assert (request.include_usage, request.events, request.progress) == (True, True, False)


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        (b"{not json", 400, "not JSON"),
        (b"[]", 400, "JSON object"),
        ({"messages": []}, 400, "messages"),
        ({"messages": [{"role": "robot", "content": "x"}]}, 400, "unknown role"),
        ({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, 400, "only text"),
        ({"messages": [{"role": "assistant", "content": "x"}]}, 400, "no user message"),
        (
            {"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]},
            400,
            "last message",
        ),
        ({"messages": [{"role": "user", "content": "x"}], "n": 2}, 400, "n"),
        (
            {"messages": [{"role": "user", "content": "x"}], "tool_choice": "always"},
            400,
            "tool_choice",
        ),
        (
            {"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "x"}]},
            400,
            "tools.0",
        ),
        (
            {"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "yaml"}},
            400,
            "response_format",
        ),
        ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, 400, "max_tokens"),
    ],
)
def test_a_malformed_request_is_a_400_in_openai_s_error_shape(
    body: bytes | dict[str, Any], status: int, words: str
) -> None:
    error = _error(body)
    assert error.status == status
    assert words in error.message
    assert set(error.body()["error"]) == {"message", "type", "param", "code"}
    assert error.body()["error"]["type"] == "invalid_request_error"


def test_a_message_over_the_cap_is_a_413() -> None:
    error = _error({"messages": [{"role": "user", "content": "x" * 11}]}, Caps(message_chars=10))
    assert error.status == 413
    assert error.body()["error"]["code"] == "too_large"


def test_too_many_messages_is_a_413() -> None:
    messages = [{"role": "user", "content": "x"}] * 3
    assert _error({"messages": messages}, Caps(messages=2)).status == 413
