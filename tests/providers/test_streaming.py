"""One reading of streamed replies for every provider: SSE lines, tool-call fragments, events;
tools as values; the scripted provider's tool calls."""

from __future__ import annotations

from typing import Any

import pytest

from conch.errors import ProviderError
from conch.messages import (
    Finished,
    GenerationOptions,
    Message,
    Stage,
    TextDelta,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)
from conch.providers import ScriptedProvider, complete, drain, respond
from conch.providers.streaming import (
    MalformedStream,
    ToolCallAssembler,
    chunk_events,
    sse_data,
    staged,
)

ASK = [Message("user", "list the files")]


def test_sse_data_takes_each_data_line_and_stops_at_done() -> None:
    lines = [
        ": keepalive",
        "event: message",
        'data: {"a": 1}',
        "",
        "id: 3",
        "data:{}",
        "data: [DONE]",
        "data: late",
    ]
    assert list(sse_data(lines)) == ['{"a": 1}', "{}"]


def test_sse_data_refuses_a_line_no_server_sends() -> None:
    with pytest.raises(MalformedStream, match="<html>"):
        list(sse_data(["<html>"]))


def fragment(index: int | None = None, **fields: Any) -> dict[str, Any]:
    return {**({} if index is None else {"index": index}), **fields}


def test_fragments_with_indexes_interleave() -> None:
    tools = ToolCallAssembler()
    tools.add(fragment(0, id="a", function={"name": "ls", "arguments": '{"p'}))
    tools.add(fragment(1, id="b", function={"name": "cat", "arguments": "{}"}))
    tools.add(fragment(0, function={"arguments": '": 1}'}))
    assert tools.flush() == [ToolCall("a", "ls", '{"p": 1}'), ToolCall("b", "cat", "{}")]
    assert tools.flush() == []  # it starts afresh


def test_fragments_without_an_index_continue_the_last_call_until_a_new_id() -> None:
    tools = ToolCallAssembler()
    tools.add(fragment(id="a", function={"name": "ls", "arguments": "{"}))
    tools.add(fragment(function={"arguments": "}"}))
    tools.add(fragment(id="a", function={"arguments": ""}))  # the same id: the same call
    tools.add(fragment(id="b", function={"name": "pwd"}))
    assert tools.flush() == [ToolCall("a", "ls", "{}"), ToolCall("b", "pwd", "")]


def test_a_call_without_an_id_gets_one_and_a_repeated_name_is_not_doubled() -> None:
    tools = ToolCallAssembler()
    tools.add(fragment(0, function={"name": "ls"}))
    tools.add(fragment(0, function={"name": "ls", "arguments": "{}"}))
    assert tools.flush() == [ToolCall("call_0", "ls", "{}")]


def test_a_call_without_a_name_is_malformed() -> None:
    tools = ToolCallAssembler()
    tools.add(fragment(0, id="a", function={"arguments": "{}"}))
    with pytest.raises(MalformedStream, match="without a function name"):
        tools.flush()


def choice(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def test_chunk_events_text_then_calls_then_one_finished() -> None:
    chunks = [
        choice({"content": "ok"}),
        choice({"tool_calls": [fragment(0, id="a", function={"name": "ls", "arguments": "{}"})]}),
        choice({}, "tool_calls"),
        {"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 2}},
        {"choices": [], "timings": {"prompt_n": 4}},
    ]
    assert list(chunk_events(chunks)) == [
        TextDelta("ok"),
        ToolCall("a", "ls", "{}"),
        Finished(Usage(4, 2), "tool_calls", {"prompt_n": 4}),
    ]


def test_chunk_events_sum_the_log_probabilities_of_the_reply_tokens() -> None:
    def token(text: str, logprob: float) -> dict[str, object]:
        return {
            "choices": [
                {"delta": {"content": text}, "logprobs": {"content": [{"logprob": logprob}]}}
            ]
        }

    events = list(chunk_events([token("ls", -0.5), token(" -l", -0.25), choice({}, "stop")]))
    assert events[-1] == Finished(Usage(), "stop", None, -0.75)
    # A stream without them has none (not zero).
    assert list(chunk_events([choice({"content": "ls"}, "stop")]))[-1].logprob is None  # type: ignore[union-attr]


def test_chunk_events_quote_a_chunk_of_the_wrong_shape() -> None:
    with pytest.raises(MalformedStream, match="choices"):
        list(chunk_events([{"choices": "nope"}]))


def test_staged_work_reports_stages_as_they_happen_and_returns_its_result() -> None:
    def work(report: Any) -> int:
        report("loading model", None)
        report("assembling model", 0.5)
        return 42

    events = staged(work)
    assert drain(events, None) == 42
    seen: list[Stage] = []
    assert drain(staged(work), seen.append) == 42
    assert seen == [Stage("loading model"), Stage("assembling model", 0.5)]


def test_staged_work_raises_its_error_in_the_caller() -> None:
    def work(report: Any) -> int:
        raise ValueError("broken")

    with pytest.raises(ValueError, match="broken"):
        drain(staged(work))


def test_a_tool_spec_round_trips_the_openai_shape() -> None:
    spec = ToolSpec(
        "read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}
    )
    assert ToolSpec.from_openai(spec.to_openai()) == spec
    with pytest.raises(ValueError):
        ToolSpec.from_openai({"type": "function"})


def test_a_tool_result_answers_its_call_as_a_tool_message() -> None:
    message = ToolResult("call_1", "ls", "a\nb\n").to_message()
    assert (message.role, message.content, message.tool_call_id, message.name) == (
        "tool",
        "a\nb\n",
        "call_1",
        "ls",
    )


def test_the_scripted_provider_says_something_and_calls_tools_in_one_turn() -> None:
    call = ToolCall("c1", "ls", '{"path": "."}')
    provider = ScriptedProvider.of(["Looking.", call], "done")
    tools = [ToolSpec("ls")]
    events = list(provider.stream(ASK, GenerationOptions(), tools))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Looking."
    assert [e for e in events if isinstance(e, ToolCall)] == [call]
    assert isinstance(events[-1], Finished) and events[-1].finish_reason == "tool_calls"
    assert provider.sent[0].tools == tools
    assert complete(provider, ASK).text == "done"


def test_the_scripted_provider_refuses_a_call_to_a_tool_it_was_not_offered() -> None:
    provider = ScriptedProvider.of(ToolCall("c1", "rm", "{}"))
    with pytest.raises(ProviderError, match="'rm' names no offered tool"):
        complete(provider, ASK, tools=[ToolSpec("ls")])


def test_respond_streams_and_returns_the_whole_response() -> None:
    provider = ScriptedProvider.of("ls -la")
    events = respond(provider, ASK)
    seen: list[object] = []
    response = drain(events, seen.append)
    assert response.text == "ls -la" and response.finish_reason == "stop"
    assert isinstance(seen[-1], Finished)
