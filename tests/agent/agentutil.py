"""Helpers shared by the agent tests: tool calls, sessions on the scripted provider, and a
confirmation callback that answers from a list."""

from __future__ import annotations

import json
from typing import Any

from conch.agent import Session
from conch.agent.events import AgentEvent, ToolFinished
from conch.execute.checked import Answer
from conch.messages import ToolCall
from conch.policy import Verdict
from conch.policy.confirm import Confirmation
from conch.providers.scripted import Reply, ScriptedProvider
from conch.tools import Tool


def call(name: str, call_id: str = "c1", /, **arguments: Any) -> ToolCall:
    """A native tool call with JSON arguments."""
    return ToolCall(call_id, name, json.dumps(arguments))


def scripted_session(*replies: Reply, tools: tuple[Tool, ...] = (), **options: Any) -> Session:
    """A session without the built-in tools, on a provider that gives ``replies``."""
    session = Session(ScriptedProvider.of(*replies), **options).with_default_tools(False)
    for item in tools:
        session.add_tool(item)
    return session


def sent(session: Session) -> ScriptedProvider:
    """The scripted provider behind ``session`` (to read what it was sent)."""
    provider = session.provider
    assert isinstance(provider, ScriptedProvider)
    return provider


class Approver:
    """A confirmation callback that answers from a list and records each question."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    def __call__(self, command: str, verdict: Verdict, wanted: Confirmation) -> Answer:
        self.asked.append(command)
        return self.answers.pop(0)


class EventLog:
    """An ``on_event`` callback that keeps every event of a turn."""

    def __init__(self) -> None:
        self.events: list[AgentEvent] = []

    def __call__(self, event: AgentEvent) -> None:
        self.events.append(event)

    @property
    def finished(self) -> list[ToolFinished]:
        """The tool calls that finished, in order."""
        return [e for e in self.events if isinstance(e, ToolFinished)]
