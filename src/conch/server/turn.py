"""One request's turn: the ``Session`` it gets, and its events as the server sends them.

``open_session`` builds the session a request asks for (conch's tools unless the request
says otherwise, the client's own tools beside them, the client's system text appended, the
history restored). ``run_turn`` runs it, in a worker thread, and hands on what happens as
``Item``s: text, ``Extra`` events (a server-side tool call and its result, the model's
stages, the prompt's evaluation), and one ``Outcome`` or ``APIError`` last. When the model
calls one of the client's tools, the turn ends there and the calls go back to the client.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel, ConfigDict

from conch.agent.events import AgentError, Pruned, ToolFinished, ToolStarted
from conch.agent.loop import Limits
from conch.agent.session import Session
from conch.errors import ConchError, ModelOutputError, ProviderError
from conch.messages import (
    Finished,
    GenerationOptions,
    Note,
    Stage,
    TextDelta,
    ToolCall,
    ToolSpec,
    Usage,
)
from conch.server.config import ServerConfig
from conch.server.models import ModelTable
from conch.server.wire import APIError, ChatRequest
from conch.tools import Tool

# What a tool result's content is cut to in a ``conch.tool_result`` event.
EVENT_RESULT_CHARS = 16_000
TIMING_KEYS = ("prompt_n", "cache_n", "prompt_ms", "prompt_per_second", "predicted_n")


@dataclass(frozen=True, slots=True)
class Extra:
    """An event standard clients skip: ``kind`` is ``tool_call``, ``tool_result``,
    ``prompt_progress``, ``prompt_eval``, ``note`` or ``pruned``."""

    kind: str
    data: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the turn ended: the visible ``text``, the ``calls`` of the client's tools the
    model made (then ``finish_reason`` is ``tool_calls``), and the tokens used."""

    text: str
    calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    usage: Usage = field(default_factory=Usage)


Item = str | Extra | Outcome | APIError
Emit = Callable[[Item], None]


class _Open(BaseModel):
    """The arguments of a client's tool: checked by the client, not here."""

    model_config = ConfigDict(extra="allow")


def _runs_elsewhere(**arguments: Any) -> str:
    raise RuntimeError("this tool runs in the client")  # never called: the turn ends first


def client_tool(spec: ToolSpec) -> Tool:
    """A tool the client runs: offered to the model, answered by the client."""
    return Tool(spec, _runs_elsewhere, _Open, trigger=spec.description.split("\n", 1)[0])


def open_session(
    request: ChatRequest, config: ServerConfig, models: ModelTable
) -> tuple[Session, str]:
    """The session that answers ``request``, and the name of its model; APIError for a
    request the tools cannot serve (an unknown tool named, a client tool named as one of
    conch's own, a history that is not a valid conversation)."""
    name = models.resolve(request.model)
    options = GenerationOptions(
        temperature=config.temperature if request.temperature is None else request.temperature,
        max_tokens=request.max_tokens or config.max_tokens,
        stop=request.stop,
        seed=request.seed,
        json_schema=request.json_schema,
    )
    session = Session(
        models.provider(name),
        tools=replace(config.tools, confirm=None),  # no one to ask: what needs a yes is refused
        tool_calls=models.tool_calls(name),
        options=options,
        limits=Limits(max_iterations=config.max_iterations),
        context_tokens=models.context_tokens(name),
        # One request, one reply: a message is never split into turns here (a client's own
        # tool call would end the request between them).
        stepwise=False,
    )
    own = {tool.name: tool for tool in session.tools}
    for spec in request.client_tools:
        if spec.name in own:
            raise APIError(
                400, f"the tool name {spec.name!r} is one of the server's own tools", param="tools"
            )
    offered = [client_tool(spec) for spec in request.client_tools]
    choice = request.tool_choice
    if choice == "none":
        session.with_default_tools(False)
        offered = []
    elif choice not in ("auto", "required"):
        chosen = [t for t in offered if t.name == choice] or (
            [own[choice]] if choice in own else []
        )
        if not chosen:
            raise APIError(
                400, f"tool_choice names no tool offered: {choice!r}", param="tool_choice"
            )
        session.with_default_tools(False)
        offered = chosen
        session.system_append(f"Answer this request by calling the tool {choice}.")
    elif choice == "required":
        session.system_append("Answer this request by calling one of your tools.")
    if request.json_schema is not None and choice in ("auto", "none"):
        session.with_default_tools(False)  # structured output: the reply itself, no steps
    for tool in offered:
        session.add_tool(tool)
    for text in request.system:
        session.system_append(text)
    history = request.history[:-1] if request.history[-1].role == "user" else request.history
    try:
        session.restore(history)
    except ValueError as exc:
        raise APIError(400, f"messages: {exc}", param="messages") from None
    return session, name


def run_turn(
    session: Session,
    request: ChatRequest,
    emit: Emit,
    cancelled: threading.Event,
) -> None:
    """Run the turn on this thread, handing each ``Item`` to ``emit``; stop at the next
    event once ``cancelled`` is set (the client went away, or the time ran out)."""
    last = request.history[-1]
    events = session.stream(last.content) if last.role == "user" else session.proceed()
    client = {spec.name for spec in request.client_tools}
    shown: list[str] = []
    after_tool = False
    usage = Usage()
    finish = "stop"
    try:
        while not cancelled.is_set():
            try:
                event = next(events)
            except StopIteration:
                break
            if isinstance(event, TextDelta):
                text = event.text
                if after_tool and shown:
                    text = "\n\n" + text.lstrip("\n")
                after_tool = False
                shown.append(text)
                emit(text)
            elif isinstance(event, Finished):
                usage = Usage(
                    usage.prompt_tokens + event.usage.prompt_tokens,
                    usage.completion_tokens + event.usage.completion_tokens,
                )
                finish = "length" if event.finish_reason == "length" else "stop"
                if event.timings:
                    emit(Extra("prompt_eval", _timings(event.timings)))
            elif isinstance(event, ToolStarted):
                if event.call.name in client:
                    text, calls = _client_calls(session, client)
                    emit(Outcome(text, calls, "tool_calls", usage))
                    return
                after_tool = True
                emit(Extra("tool_call", _call(event.call) | {"iteration": event.iteration}))
            elif isinstance(event, ToolFinished):
                emit(Extra("tool_result", _result(event)))
            elif isinstance(event, Stage):
                emit(Extra("prompt_progress", {"stage": event.label, "fraction": event.fraction}))
            elif isinstance(event, Note):
                emit(Extra("note", {"text": event.text}))
            elif isinstance(event, Pruned):
                emit(Extra("pruned", {"dropped": event.dropped, "summary": event.summary}))
        else:  # the loop ended on ``cancelled``, not on the stream's end: nobody listens
            return
        emit(Outcome("".join(shown), (), finish, usage))
    except AgentError as exc:
        emit(APIError(500, str(exc), kind="server_error", code="agent_stopped"))
    except (ProviderError, ModelOutputError) as exc:
        emit(APIError(502, f"the model failed: {exc}", kind="server_error", code="model_error"))
    except ConchError as exc:
        emit(APIError(500, str(exc), kind="server_error"))
    except Exception as exc:  # a bug: the client gets one line, not a hung request
        emit(APIError(500, f"internal error: {type(exc).__name__}: {exc}", kind="server_error"))
    finally:
        events.close()


def _client_calls(session: Session, client: set[str]) -> tuple[str, tuple[ToolCall, ...]]:
    """The reply that called a client tool: its text, and its calls of the client's tools
    (each under a fresh id: the client's history may already hold the agent's short ones)."""
    reply = next(m for m in reversed(session.history) if m.role == "assistant")
    calls = tuple(
        ToolCall(f"call_{uuid.uuid4().hex[:24]}", c.name, c.arguments)
        for c in reply.tool_calls
        if c.name in client
    )
    return reply.content, calls


def _call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


def _result(event: ToolFinished) -> dict[str, Any]:
    content = event.result.content
    return {
        "id": event.call.id,
        "name": event.call.name,
        "content": content[:EVENT_RESULT_CHARS],
        "is_error": event.result.is_error,
        "truncated": event.truncated or len(content) > EVENT_RESULT_CHARS,
        "duration_s": round(event.duration_s, 3),
    }


def _timings(timings: dict[str, Any]) -> dict[str, Any]:
    return {k: timings[k] for k in TIMING_KEYS if isinstance(timings.get(k), int | float)}
