"""The OpenAI chat-completions request, read into conch's types, and the errors it can get.

Everything a client may send is checked here, before a model is touched: each problem is an
``APIError`` in OpenAI's error shape (``{"error": {"message", "type", "param", "code"}}``)
with the HTTP status it calls for (400 for a malformed request, 413 for one over the caps).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from conch.messages import Message, ToolCall, ToolSpec
from conch.server.config import Caps


class APIError(Exception):
    """A request the server will not serve, as OpenAI clients expect to read it."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        kind: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.message, self.kind, self.param, self.code = (
            status,
            message,
            kind,
            param,
            code,
        )

    def body(self) -> dict[str, Any]:
        """The JSON body of the error response (and of an error in a stream)."""
        return {
            "error": {
                "message": self.message,
                "type": self.kind,
                "param": self.param,
                "code": self.code,
            }
        }


def too_large(what: str, limit: str, param: str | None = None) -> APIError:
    """The 413 for ``what`` over its cap."""
    return APIError(413, f"{what} is over the limit of {limit}", param=param, code="too_large")


ToolChoice = Literal["auto", "none", "required"] | str  # a name: that tool only


@dataclass(slots=True)
class ChatRequest:
    """One chat-completions request, checked.

    ``system``: the client's system (and developer) texts; ``history``: the other messages,
    in order (neighbouring user messages joined); ``client_tools``: the tools the client
    runs itself; ``tool_choice``: ``auto``, ``none``, ``required`` or the one tool's name;
    ``json_schema``: the reply's schema (``response_format``); ``events``: the ``conch.*``
    chunks (None: the server's default); ``progress``: the prompt progress ones among them.
    """

    model: str | None = None
    system: list[str] = field(default_factory=list)
    history: list[Message] = field(default_factory=list)
    stream: bool = False
    include_usage: bool = False
    events: bool | None = None
    progress: bool = True
    client_tools: list[ToolSpec] = field(default_factory=list)
    tool_choice: ToolChoice = "auto"
    json_schema: dict[str, Any] | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    seed: int | None = None
    stop: tuple[str, ...] = ()


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore")

    model: str | None = None
    messages: list[dict[str, Any]] = Field(min_length=1)
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    response_format: dict[str, Any] | None = None
    max_tokens: int | None = Field(default=None, ge=1)
    max_completion_tokens: int | None = Field(default=None, ge=1)
    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    seed: int | None = None
    stop: str | list[str] | None = None
    n: int | None = Field(default=None, ge=1, le=1)


def parse_request(raw: bytes, caps: Caps) -> ChatRequest:
    """The request ``raw`` holds; APIError (400 or 413) for anything wrong with it."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise APIError(400, f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise APIError(400, "the body must be a JSON object")
    try:
        body = _Body.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        param = ".".join(str(p) for p in first["loc"]) or None
        raise APIError(400, f"{param or 'body'}: {first['msg']}", param=param) from None
    if len(body.messages) > caps.messages:
        raise too_large(f"{len(body.messages)} messages", f"{caps.messages}", "messages")
    options = body.stream_options or {}
    request = ChatRequest(
        model=body.model,
        stream=body.stream,
        include_usage=bool(options.get("include_usage", False)),
        events=_flag(options, "conch_events"),
        progress=_flag(options, "conch_prompt_progress") is not False,
        max_tokens=body.max_completion_tokens or body.max_tokens,
        temperature=body.temperature,
        seed=body.seed,
        stop=(body.stop,) if isinstance(body.stop, str) else tuple(body.stop or ()),
    )
    request.system, request.history = _messages(body.messages, caps)
    request.client_tools = [_tool(i, t) for i, t in enumerate(body.tools or [])]
    names = [t.name for t in request.client_tools]
    if len(set(names)) != len(names):
        raise APIError(400, "two tools have the same name", param="tools")
    request.tool_choice = _tool_choice(body.tool_choice)
    request.json_schema = _schema(body.response_format)
    return request


def _flag(options: dict[str, Any], key: str) -> bool | None:
    value = options.get(key)
    if value is None or isinstance(value, bool):
        return value
    raise APIError(
        400, f"stream_options.{key} must be true or false", param=f"stream_options.{key}"
    )


def _messages(items: list[dict[str, Any]], caps: Caps) -> tuple[list[str], list[Message]]:
    system: list[str] = []
    history: list[Message] = []
    names: dict[str, str] = {}  # tool call id -> tool name
    for index, item in enumerate(items):
        where = f"messages.{index}"
        role = item.get("role")
        text = _content(item.get("content"), where, caps)
        if role in ("system", "developer"):
            system.append(text)
        elif role == "user":
            if history and history[-1].role == "user":
                history[-1] = Message("user", f"{history[-1].content}\n\n{text}")
            else:
                history.append(Message("user", text))
        elif role == "assistant":
            calls = tuple(_call(where, i, c) for i, c in enumerate(item.get("tool_calls") or []))
            names.update((c.id, c.name) for c in calls)
            history.append(Message("assistant", text, tool_calls=calls))
        elif role == "tool":
            call_id = item.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise APIError(400, f"{where}: a tool message needs its tool_call_id", param=where)
            history.append(Message("tool", text, tool_call_id=call_id, name=names.get(call_id)))
        else:
            raise APIError(
                400,
                f"{where}: unknown role {role!r} (use system, developer, user, assistant or tool)",
                param=f"{where}.role",
            )
    if not any(m.role == "user" for m in history):
        raise APIError(400, "no user message to answer", param="messages")
    if history[-1].role not in ("user", "tool"):
        raise APIError(
            400, "the last message must be the user's or a tool's result", param="messages"
        )
    return system, history


def _content(content: Any, where: str, caps: Caps) -> str:
    if content is None:
        text = ""
    elif isinstance(content, str):
        text = content
    elif isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text":
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise APIError(
                    400, f"{where}: only text content is supported, not {kind}", param=where
                )
            parts.append(str(part.get("text", "")))
        text = "".join(parts)
    else:
        raise APIError(400, f"{where}: content must be text or a list of text parts", param=where)
    if len(text) > caps.message_chars:
        raise too_large(f"{where} ({len(text)} characters)", f"{caps.message_chars}", where)
    return text


def _call(where: str, index: int, data: Any) -> ToolCall:
    try:
        function = data["function"]
        call = ToolCall(str(data["id"]), str(function["name"]), function.get("arguments") or "{}")
    except (KeyError, TypeError, AttributeError):
        param = f"{where}.tool_calls.{index}"
        raise APIError(400, f"{param}: needs id, function.name and function.arguments") from None
    if not isinstance(call.arguments, str):
        raise APIError(400, f"{where}.tool_calls.{index}: arguments must be a JSON string")
    return call


def _tool(index: int, data: Any) -> ToolSpec:
    try:
        return ToolSpec.from_openai(data)
    except ValueError:
        raise APIError(
            400,
            f"tools.{index}: not a function tool ({{'type': 'function', 'function': "
            "{'name': ..., 'parameters': {...}}})",
            param=f"tools.{index}",
        ) from None


def _tool_choice(choice: str | dict[str, Any] | None) -> ToolChoice:
    if choice is None:
        return "auto"
    if isinstance(choice, str):
        if choice in ("auto", "none", "required"):
            return choice
        raise APIError(400, f"unknown tool_choice {choice!r}", param="tool_choice")
    function = choice.get("function")
    name = function.get("name") if isinstance(function, dict) else None
    if choice.get("type") != "function" or not isinstance(name, str) or not name:
        raise APIError(
            400,
            "tool_choice must be auto, none, required or "
            '{"type": "function", "function": {"name": ...}}',
            param="tool_choice",
        )
    return name


def _schema(response_format: dict[str, Any] | None) -> dict[str, Any] | None:
    if response_format is None:
        return None
    kind = response_format.get("type")
    if kind == "text":
        return None
    if kind == "json_object":
        return {"type": "object"}
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, dict) else None
        if not isinstance(schema, dict):
            raise APIError(
                400,
                "response_format.json_schema.schema must be a JSON schema object",
                param="response_format",
            )
        return schema
    raise APIError(400, f"unknown response_format type {kind!r}", param="response_format.type")
