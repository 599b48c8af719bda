"""Tool calls written as text: read leniently, constrained by a schema, streamed as answers."""

from __future__ import annotations

import json

import pytest

from conch.agent.toolcalls import (
    AnswerStream,
    json_step_messages,
    parse_step,
    render_call,
    step_schema,
)
from conch.messages import Message, ToolCall, ToolSpec

KNOWN = ["bash", "fs_read"]


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"tool": "bash", "arguments": {"command": "ls"}}\n```',
        'I will list the files.\n```\n{"name": "bash", "arguments": {"command": "ls"}}\n```',
        '{"tool": "bash", "arguments": {"command": "ls"}}',
        '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>',
        '<tool_call>{"name": "bash", "parameters": {"command": "ls"}}',
        '{"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}',
        '{"type": "function", "function": {"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}}',
        "{'tool': 'bash', 'args': {'command': 'ls'}}",
        'Sure! {"tool": "bash", "arguments": {"command": "ls"}} should do it.',
    ],
)
def test_a_call_is_read_from_every_form_a_small_model_writes(text: str) -> None:
    step = parse_step(text, KNOWN)
    assert step.answer is None
    assert [(c.name, json.loads(c.arguments)) for c in step.calls] == [("bash", {"command": "ls"})]
    assert step.calls[0].id == "call_1"


def test_several_tagged_calls_are_several_calls() -> None:
    text = (
        '<tool_call>{"name": "fs_read", "arguments": {"path": "a"}}</tool_call>\n'
        '<tool_call>{"name": "fs_read", "arguments": {"path": "b"}}</tool_call>'
    )
    step = parse_step(text, KNOWN, id_prefix="call_3")
    assert [json.loads(c.arguments)["path"] for c in step.calls] == ["a", "b"]
    assert [c.id for c in step.calls] == ["call_3_1", "call_3_2"]


def test_a_call_without_arguments_gets_an_empty_object() -> None:
    step = parse_step('{"tool": "datetime"}')
    assert [(c.name, c.arguments) for c in step.calls] == [("datetime", "{}")]


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ('{"answer": "There are 3 files."}', "There are 3 files."),
        ('```json\n{"answer": "done"}\n```', "done"),
        ("The answer is 42.", "The answer is 42."),
        ('{"name": "Ada", "age": 36}', '{"name": "Ada", "age": 36}'),
        ("{not json at all", "{not json at all"),
        ("<tool_call>garbage</tool_call>", "<tool_call>garbage</tool_call>"),
        ("", ""),
    ],
)
def test_text_without_a_call_is_the_answer(text: str, answer: str) -> None:
    step = parse_step(text, KNOWN)
    assert step.calls == ()
    assert step.answer == answer


def test_a_bare_name_counts_as_a_call_only_for_a_known_tool() -> None:
    assert parse_step('{"name": "bash"}', KNOWN).calls[0].name == "bash"
    assert parse_step('{"name": "Ada"}', KNOWN).calls == ()


def test_the_step_schema_constrains_each_tool_to_its_own_arguments() -> None:
    bash = ToolSpec(
        "bash", "Run", {"type": "object", "properties": {"command": {"type": "string"}}}
    )
    tricky = ToolSpec("tricky", "", {"type": "object", "properties": {"x": {"$ref": "#/$defs/X"}}})
    schema = step_schema([bash, tricky])
    first, second, answer = schema["anyOf"]
    assert first["properties"] == {"tool": {"const": "bash"}, "arguments": bash.parameters}
    assert second["properties"]["arguments"] == {"type": "object"}
    assert answer["required"] == ["answer"]


def test_the_plain_step_schema_is_an_enum_of_names_or_an_answer() -> None:
    specs = [ToolSpec("bash"), ToolSpec("fs_read")]
    call, answer = step_schema(specs, typed_arguments=False)["anyOf"]
    assert call["properties"]["tool"] == {"enum": ["bash", "fs_read"]}
    assert answer["properties"] == {"answer": {"type": "string"}}
    assert step_schema([])["required"] == ["answer"]


def test_a_conversation_becomes_plain_alternating_messages_for_json_steps() -> None:
    bash = ToolCall("c1", "bash", '{"command": "ls"}')
    messages = [
        Message("system", "sys"),
        Message("user", "list files"),
        Message("assistant", "", (bash,)),
        Message("tool", "a.txt", tool_call_id="c1", name="bash"),
        Message("user", "and now?"),
        Message("assistant", "done"),
    ]
    plain = json_step_messages(messages)
    assert [m.role for m in plain] == ["system", "user", "assistant", "user", "assistant"]
    assert (
        plain[2].content == render_call(bash) == '{"tool": "bash", "arguments": {"command": "ls"}}'
    )
    assert plain[3].content == "Result of bash:\na.txt\n\nand now?"
    assert all(not m.tool_calls and m.tool_call_id is None for m in plain)


def test_the_answer_streams_as_it_decodes_even_when_escapes_are_split() -> None:
    stream = AnswerStream()
    pieces = ['{"ans', 'wer": "Line', " one\\", "nLine \\u00", "e9", "\\ud83d", "\\ude00", '"}']
    shown = [stream.feed(p) for p in pieces]
    assert "".join(shown) == "Line one\nLine é😀"
    assert shown[:4] == ["", "Line", " one", "\nLine "]  # an escape waits for its end
    assert stream.shown == "Line one\nLine é😀"


def test_a_tool_call_step_shows_nothing_while_it_streams() -> None:
    stream = AnswerStream()
    assert [stream.feed(p) for p in ['{"tool": "ba', 'sh", "arguments": {}}']] == ["", ""]
