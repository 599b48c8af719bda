"""Tool calls written as text, for models that do not emit native tool calls.

Small local models (Qwen2.5-Coder among them) write a tool call as JSON: in a fenced
```` ```json ```` block, bare, or between ``<tool_call>`` tags, with the tool under ``tool``,
``name`` or ``function`` and its arguments under ``arguments``, ``parameters``, ``args`` or
``input`` (an object, or a JSON string holding one). ``parse_step`` reads any of these
leniently; text that holds no call is the model's answer.

A provider that constrains its output to a JSON schema (llama.cpp does, from the
``response_format`` of an OpenAI-compatible request or ``GenerationOptions.json_schema``) is
given ``step_schema``: each step is ``{"tool": ..., "arguments": {...}}`` or
``{"answer": "..."}``, so a small model cannot get the shape wrong. ``json_step_messages``
turns a conversation into the plain messages such a model is sent, and ``AnswerStream``
picks the answer's text out of a step as it streams.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from conch.messages import Message, ToolCall, ToolSpec

_NAME_KEYS = ("tool", "name", "function", "tool_name")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input", "tool_input")
_ANSWER_KEYS = ("answer", "final_answer", "response")
_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.DOTALL)
_FENCED = re.compile(r"```[ \t]*(?:json|tool_call|javascript)?[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Step:
    """What one reply of the model asks for: tool calls, or an answer (``answer`` is None
    when the reply holds calls)."""

    calls: tuple[ToolCall, ...] = ()
    answer: str | None = None


def parse_step(text: str, known: Iterable[str] = (), id_prefix: str = "call") -> Step:
    """The tool calls written in ``text``, or its answer.

    An object counts as a call when its tool key is ``tool`` or ``function``, or when it
    also has an arguments key, or when it names a tool in ``known``: so an answer that is
    itself JSON (``{"name": "Ada", "age": 36}``) is not mistaken for a call. Calls get the
    ids ``<id_prefix>_1``, ``<id_prefix>_2``... An ``{"answer": ...}`` object gives its
    answer; text with neither is the answer as it stands (stripped).
    """
    names = set(known)
    for candidate in _candidates(text):
        objects = candidate if isinstance(candidate, list) else [candidate]
        calls = [c for c in (_call(o, names) for o in objects) if c is not None]
        if calls:
            return Step(
                tuple(
                    ToolCall(f"{id_prefix}_{i}", name, json.dumps(args, ensure_ascii=False))
                    for i, (name, args) in enumerate(calls, start=1)
                )
            )
        if len(objects) == 1 and isinstance(objects[0], dict):
            answer = _answer(objects[0])
            if answer is not None:
                return Step(answer=answer)
    return Step(answer=text.strip())


def parse_tool_calls(text: str, known: Iterable[str] = ()) -> list[ToolCall]:
    """Only the calls of ``parse_step`` (empty when the text is an answer)."""
    return list(parse_step(text, known).calls)


def step_schema(tools: Sequence[ToolSpec], *, typed_arguments: bool = True) -> dict[str, Any]:
    """The JSON schema of one agent step: a call of one of ``tools`` or an answer.

    With ``typed_arguments`` each tool's own parameter schema constrains its arguments (a
    tool whose schema uses ``$ref`` gets a plain object instead); otherwise the tool is an
    enum of names and the arguments any object.
    """
    answer = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
        "additionalProperties": False,
    }
    if not tools:
        return answer
    if not typed_arguments:
        call = _call_schema({"enum": [t.name for t in tools]}, {"type": "object"})
        return {"anyOf": [call, answer]}
    variants = [
        _call_schema({"const": t.name}, _plain(t.parameters) or {"type": "object"}) for t in tools
    ]
    return {"anyOf": [*variants, answer]}


def render_call(call: ToolCall) -> str:
    """A call the way a JSON-step model writes it."""
    try:
        arguments: Any = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        arguments = call.arguments
    return json.dumps({"tool": call.name, "arguments": arguments}, ensure_ascii=False)


def json_step_messages(messages: Sequence[Message]) -> list[Message]:
    """``messages`` as a model without native tool calls reads them: a call becomes the
    assistant's JSON text, its result a user message naming the tool, and neighbours of the
    same role merge, so roles strictly alternate after the system message."""
    out: list[Message] = []
    for message in messages:
        if message.role == "assistant" and message.tool_calls:
            parts = [message.content.strip(), *(render_call(c) for c in message.tool_calls)]
            plain = Message("assistant", "\n".join(p for p in parts if p))
        elif message.role == "tool":
            label = f"Result of {message.name}" if message.name else "Tool result"
            plain = Message("user", f"{label}:\n{message.content}")
        else:
            plain = Message(message.role, message.content)
        if out and out[-1].role == plain.role and plain.role != "system":
            plain = Message(plain.role, f"{out[-1].content}\n\n{plain.content}")
            out[-1] = plain
        else:
            out.append(plain)
    return out


class AnswerStream:
    """Picks the visible answer out of a JSON step while it streams.

    ``feed`` takes the next piece of the raw reply and returns the answer text that became
    readable with it: nothing until the reply is seen to start ``{"answer": "``, then the
    decoded string as it arrives. ``shown`` is everything returned so far.
    """

    _START = re.compile(r'\s*(?:```(?:json)?\s*)?\{\s*"(?:answer|final_answer)"\s*:\s*"')

    def __init__(self) -> None:
        self._raw = ""
        self.shown = ""

    def feed(self, text: str) -> str:
        self._raw += text
        start = self._START.match(self._raw)
        if start is None:
            return ""
        decoded = _partial_string(self._raw[start.end() :])
        new = decoded[len(self.shown) :] if decoded.startswith(self.shown) else ""
        self.shown = decoded if new else self.shown
        return new


def _call_schema(tool: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {"tool": tool, "arguments": arguments},
        "required": ["tool", "arguments"],
        "additionalProperties": False,
    }


def _plain(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``schema`` when it is self-contained (no ``$ref``), else None."""
    return None if "$ref" in json.dumps(schema) else schema


def _candidates(text: str) -> Iterator[Any]:
    """JSON values found in ``text``: tagged, fenced, the whole text, then the first
    object or list embedded in it."""
    sources = [m.group(1) for m in _TAGGED.finditer(text)]
    if sources:  # several tags: several calls in one reply
        values = [v for v in (_load(s) for s in sources) if v is not None]
        flat = [x for v in values for x in (v if isinstance(v, list) else [v])]
        if flat:
            yield flat
    for match in _FENCED.finditer(text):
        value = _load(match.group(1))
        if value is not None:
            yield value
    value = _load(text)
    if value is not None:
        yield value
    embedded = _embedded(text)
    if embedded is not None:
        yield embedded


def _load(text: str) -> Any:
    """A JSON object or list (or a Python literal of one, single quotes and all), or None."""
    text = text.strip()
    if not text or text[0] not in "{[":
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            return None
    return value if isinstance(value, dict | list) else None


def _embedded(text: str) -> Any:
    """The first JSON object in ``text`` that starts at a ``{`` and decodes whole."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", text):
        try:
            value, _ = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _call(value: Any, known: set[str]) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(value, dict):
        return None
    function = value.get("function")
    if isinstance(function, dict):  # the OpenAI shape: {"function": {"name", "arguments"}}
        return _call({"tool": function.get("name"), **_arguments_of(function)}, known)
    key = next((k for k in _NAME_KEYS if isinstance(value.get(k), str) and value[k]), None)
    if key is None:
        return None
    name = str(value[key]).strip()
    has_arguments = any(k in value for k in _ARGUMENT_KEYS)
    if not (key in ("tool", "function", "tool_name") or has_arguments or name in known):
        return None
    arguments = _decoded_arguments(value)
    if arguments is None:
        return None
    return name, arguments


def _arguments_of(function: dict[str, Any]) -> dict[str, Any]:
    return {k: function[k] for k in _ARGUMENT_KEYS if k in function}


def _decoded_arguments(value: dict[str, Any]) -> dict[str, Any] | None:
    raw = next((value[k] for k in _ARGUMENT_KEYS if k in value), None)
    if raw is None:
        return {}
    if isinstance(raw, str):
        raw = _load(raw) if raw.strip() else {}
    return raw if isinstance(raw, dict) else None


def _answer(value: dict[str, Any]) -> str | None:
    for key in _ANSWER_KEYS:
        answer = value.get(key)
        if isinstance(answer, str):
            return answer
        if answer is not None:
            return json.dumps(answer, ensure_ascii=False)
    return None


def _partial_string(body: str) -> str:
    """The decoded part of a JSON string body that has arrived so far (up to its closing
    quote, or up to an escape that is not yet complete)."""
    end = 0
    i = 0
    while i < len(body):
        char = body[i]
        if char == '"':
            break
        if char == "\\":
            if i + 1 >= len(body):
                break
            if body[i + 1] == "u":
                if i + 6 > len(body):
                    break
                code = body[i + 2 : i + 6]
                # A high surrogate waits for its pair.
                if code[0] in "dD" and code[1] in "89abAB":
                    if i + 12 > len(body):
                        break
                    i += 12
                else:
                    i += 6
            else:
                i += 2
        else:
            i += 1
        end = i
    try:
        decoded: str = json.loads('"' + body[:end] + '"')
    except json.JSONDecodeError:
        return ""
    return decoded
